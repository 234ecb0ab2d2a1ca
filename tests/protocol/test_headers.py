"""Mcp-Param-* and Mcp-Name values, rendered as the 2026-07-28 Streamable HTTP transport says."""

import base64

import pytest

from approvals.protocol.headers import encode_value, param_headers, render, request_headers
from approvals.protocol.tools import x_mcp_headers


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
    assert request_headers("2026-07-28", "resources/read", {"uri": "file:///é"})["Mcp-Name"] == encode_value(
        "file:///é"
    )
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


TOOL = {"name": "search", "inputSchema": SCHEMA}


def test_it_builds_one_header_per_annotated_argument_present_including_nested_ones():
    arguments = {"region": "eu wést", "limit": 10, "dry": False, "where": {"zone": "b"}, "query": "select"}
    assert param_headers(x_mcp_headers(TOOL), arguments) == {
        "Mcp-Param-Region": encode_value("eu wést"),
        "Mcp-Param-Limit": "10",
        "Mcp-Param-Dry-Run": "false",
        "Mcp-Param-Zone": "b",
    }


def test_it_omits_the_header_of_an_absent_or_null_argument():
    assert param_headers(x_mcp_headers(TOOL), {"region": None, "query": "q"}) == {}
