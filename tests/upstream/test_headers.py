"""Mcp-Param-* and Mcp-Name values, rendered as the 2026-07-28 Streamable HTTP transport says."""

import base64

import pytest

from approvals.upstream.headers import encode_value, invalid_annotation, param_headers, render, request_headers


@pytest.mark.parametrize(
    "value, header",
    [
        ("us-west1", "us-west1"),
        ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
        (" padded ", "=?base64?IHBhZGRlZCA=?="),
        ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
        ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
    ],
)
def test_it_encodes_the_spec_examples_exactly(value, header):
    assert encode_value(value) == header


def test_it_keeps_inner_spaces_and_punctuation_plain():
    assert encode_value("two words, one: value!") == "two words, one: value!"


@pytest.mark.parametrize("value", ["tab\there", "\x7f", "trailing ", "é", "=?base64?x?="])
def test_it_wraps_whatever_a_header_cannot_carry_bare_and_the_wrapping_round_trips(value):
    header = encode_value(value)
    assert header.startswith("=?base64?") and header.endswith("?=")
    assert base64.b64decode(header[len("=?base64?") : -2]).decode("utf-8") == value


def test_it_renders_integers_in_decimal_and_booleans_in_lowercase():
    assert [render(v) for v in (42, -7, 3.0, True, False, "x")] == ["42", "-7", "3", "true", "false", "x"]


def test_it_gives_no_header_text_to_values_that_are_not_primitive():
    assert [render(v) for v in (None, 1.5, [1], {"a": 1})] == [None, None, None, None]


def test_it_refuses_integers_outside_the_javascript_safe_range():
    assert render(2**53 - 1) == str(2**53 - 1)
    with pytest.raises(ValueError):
        render(2**53)


def test_it_mirrors_method_and_name_and_encodes_an_unsafe_name():
    assert request_headers("2026-07-28", "tools/call", {"name": "get_weather"}) == {
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "get_weather",
    }
    assert request_headers("2026-07-28", "resources/read", {"uri": "file:///é"})["Mcp-Name"] == encode_value("file:///é")
    assert "Mcp-Name" not in request_headers("2026-07-28", "tools/list", {})


SCHEMA = {
    "type": "object",
    "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "limit": {"type": "integer", "x-mcp-header": "Limit"},
        "dry": {"type": "boolean", "x-mcp-header": "Dry-Run"},
        "where": {"type": "object", "properties": {"zone": {"type": "string", "x-mcp-header": "Zone"}}},
        "query": {"type": "string"},
    },
}


def test_it_builds_one_header_per_annotated_argument_present_including_nested_ones():
    arguments = {"region": "eu wést", "limit": 10, "dry": False, "where": {"zone": "b"}, "query": "select"}
    assert param_headers(SCHEMA, arguments) == {
        "Mcp-Param-Region": encode_value("eu wést"),
        "Mcp-Param-Limit": "10",
        "Mcp-Param-Dry-Run": "false",
        "Mcp-Param-Zone": "b",
    }


def test_it_omits_the_header_of_an_absent_or_null_argument():
    assert param_headers(SCHEMA, {"region": None, "query": "q"}) == {}


def test_it_accepts_the_spec_example_annotation():
    assert invalid_annotation(SCHEMA) is None


@pytest.mark.parametrize(
    "schema, reason",
    [
        ({"properties": {"a": {"type": "string", "x-mcp-header": ""}}}, "token"),
        ({"properties": {"a": {"type": "string", "x-mcp-header": "A B"}}}, "token"),
        ({"properties": {"a": {"type": "string", "x-mcp-header": "A:B"}}}, "token"),
        ({"properties": {"a": {"type": "number", "x-mcp-header": "A"}}}, "type"),
        ({"properties": {"a": {"type": "array", "x-mcp-header": "A"}}}, "type"),
        ({"properties": {"a": {"type": "string", "x-mcp-header": "Dup"}, "b": {"type": "string", "x-mcp-header": "dup"}}}, "repeats"),
        ({"properties": {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}}}, "plain chain"),
        ({"oneOf": [{"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}]}, "plain chain"),
        ({"$defs": {"a": {"type": "string", "x-mcp-header": "A"}}}, "plain chain"),
        ({"type": "string", "x-mcp-header": "Root"}, "plain chain"),
    ],
)
def test_it_finds_every_annotation_the_spec_forbids(schema, reason):
    assert reason in invalid_annotation(schema)


def test_it_ignores_instance_data_that_merely_contains_the_keyword():
    schema = {"properties": {"a": {"type": "object", "default": {"x-mcp-header": "not an annotation"}}}}
    assert invalid_annotation(schema) is None
