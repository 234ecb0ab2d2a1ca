import hashlib

import pytest

from approvals.protocol.canonical import canonical_json, sha256_digest


def test_it_sorts_keys_and_leaves_out_whitespace():
    assert canonical_json({"b": 1, "a": [1, {"d": None, "c": True}]}) == b'{"a":[1,{"c":true,"d":null}],"b":1}'


def test_it_writes_non_ascii_text_as_utf8_rather_than_escapes():
    assert canonical_json({"city": "Zürich ☃"}) == '{"city":"Zürich ☃"}'.encode()


def test_it_keeps_integers_and_floats_apart():
    assert canonical_json([1, 1.0, 0.1]) == b"[1,1.0,0.1]"


@pytest.mark.parametrize("number", [float("nan"), float("inf"), float("-inf")])
def test_it_refuses_numbers_json_cannot_hold(number):
    with pytest.raises(ValueError):
        canonical_json({"x": [number]})


def test_it_refuses_non_string_keys_instead_of_merging_them_with_string_ones():
    with pytest.raises(ValueError, match="keys must be strings"):
        canonical_json({1: "a"})


@pytest.mark.parametrize("value", [{1, 2}, b"bytes", object()])
def test_it_refuses_values_that_are_not_json(value):
    with pytest.raises(ValueError):
        canonical_json({"x": value})


def test_it_refuses_a_lone_surrogate_that_utf8_cannot_encode():
    with pytest.raises(ValueError, match="surrogate"):
        canonical_json("\ud800")


def test_it_refuses_a_value_nested_too_deeply_to_encode_with_a_value_error():
    value = []
    for _ in range(100_000):
        value = [value]
    with pytest.raises(ValueError):
        canonical_json(value)


def test_it_gives_the_same_digest_whatever_the_order_of_keys():
    first = {"name": "t", "meta": {"a": 1, "b": [1, 2]}}
    second = {"meta": {"b": [1, 2], "a": 1}, "name": "t"}
    assert sha256_digest(first) == sha256_digest(second)


def test_it_digests_the_canonical_bytes_with_sha256_in_hex():
    value = {"b": "é", "a": 1}
    assert sha256_digest(value) == hashlib.sha256('{"a":1,"b":"é"}'.encode()).hexdigest()
