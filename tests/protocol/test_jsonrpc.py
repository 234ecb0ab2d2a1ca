import pytest

from approvals.protocol.jsonrpc import (
    INVALID_REQUEST,
    PARSE_ERROR,
    JsonRpcError,
    Notification,
    Request,
    Response,
    decode,
    encode,
    has_nul,
    parse_message,
    without_nul,
)


def code_of(call, *args):
    with pytest.raises(JsonRpcError) as excinfo:
        call(*args)
    return excinfo.value.code


def test_it_answers_deeply_nested_json_with_a_parse_error():
    assert code_of(decode, "[" * 100_000 + "]" * 100_000) == PARSE_ERROR


def test_it_answers_bad_json_with_a_parse_error():
    assert code_of(decode, b"{not json") == PARSE_ERROR
    assert code_of(decode, b"\xff\xfe") == PARSE_ERROR


def test_it_answers_an_unpaired_surrogate_anywhere_with_a_parse_error():
    assert code_of(decode, b'{"id": "\\ud800"}') == PARSE_ERROR
    assert code_of(decode, b'[{"a": ["x\\uDC00y"]}]') == PARSE_ERROR
    assert code_of(decode, '"\ud800"'.encode("utf-8", "surrogatepass")) == PARSE_ERROR


def test_it_reads_a_surrogate_pair_as_the_character_it_encodes():
    assert decode(b'{"id": "\\ud83d\\ude00"}') == {"id": "\U0001f600"}
    assert decode('{"id": "\U0001f600", "s": "\\\\ud800"}'.encode()) == {"id": "\U0001f600", "s": "\\ud800"}


def test_it_answers_a_number_too_large_for_a_double_with_a_parse_error():
    assert code_of(decode, b'{"amount": 1e999}') == PARSE_ERROR
    assert code_of(decode, b"[-1e400]") == PARSE_ERROR
    assert decode(b"[1e308, 5e-324, 1e-999, 123456789012345678901234567890]") == [
        1e308,
        5e-324,
        0.0,
        123456789012345678901234567890,
    ]


def test_it_finds_what_it_refuses_in_a_value_nested_as_deep_as_json_allows():
    deep = "[" * 600 + '"a\\u0000"' + "]" * 600
    value = decode(deep)
    assert has_nul(value)
    cleaned = without_nul(value)
    for _ in range(600):
        cleaned = cleaned[0]
    assert cleaned == "a\ufffd"
    assert code_of(decode, "[" * 600 + '"\\udfff"' + "]" * 600) == PARSE_ERROR


def test_it_classifies_requests_notifications_and_responses():
    assert parse_message({"jsonrpc": "2.0", "id": 1, "method": "ping"}) == Request(1, "ping", {})
    assert parse_message({"jsonrpc": "2.0", "method": "notifications/initialized"}) == Notification(
        "notifications/initialized", {}
    )
    assert parse_message({"jsonrpc": "2.0", "id": "a", "result": {}}) == Response("a", result={})
    error = parse_message({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "bad"}})
    assert error.id is None and error.error.code == -32700


@pytest.mark.parametrize(
    "message",
    [
        [],
        "ping",
        {"id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "id": True, "method": "ping"},
        {"jsonrpc": "2.0", "id": 1.5, "method": "ping"},
        {"jsonrpc": "2.0", "id": None, "method": "ping"},
        {"jsonrpc": "2.0", "id": None, "method": "ping", "error": {"code": 1}},
        {"jsonrpc": "2.0", "id": 1, "method": "ping", "result": {}},
        {"jsonrpc": "2.0", "id": 1, "method": ""},
        {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": [1]},
        {"jsonrpc": "2.0", "id": 1, "result": "yes"},
        {"jsonrpc": "2.0", "id": 1, "error": {"code": "x"}},
        {"jsonrpc": "2.0", "id": 1},
    ],
)
def test_it_refuses_what_is_not_one_json_rpc_message(message):
    assert code_of(parse_message, message) == INVALID_REQUEST


@pytest.mark.parametrize("body", ['{"a": NaN}', '{"a": Infinity}', "[-Infinity]"])
def test_it_refuses_numbers_json_does_not_have(body):
    assert code_of(decode, body) == PARSE_ERROR


def test_it_finds_and_replaces_nul_in_keys_and_values():
    value = {"a\x00": ["ok", {"b": "x\x00y"}], "n": 1}
    assert has_nul(value) and not has_nul({"a": ["ok", 1, None]})
    assert without_nul(value) == {"a\ufffd": ["ok", {"b": "x\ufffdy"}], "n": 1}


@pytest.mark.parametrize("number", [2**63, 2**64, 10**30, -(10**30)])
def test_it_reads_and_writes_integers_past_64_bits_unchanged(number):
    body = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"n":%d}}' % number

    value = decode(body)

    assert value["params"]["n"] == number and isinstance(value["params"]["n"], int)
    assert encode(value) == body


def test_it_writes_compact_utf8_without_escaping_what_utf8_carries():
    assert encode({"a": "é ✓", "b": [1, 2.5, None, True]}) == '{"a":"é ✓","b":[1,2.5,null,true]}'.encode()


def test_it_writes_keys_that_are_not_strings_as_strings():
    assert encode({1: "one"}) == b'{"1":"one"}'
