"""The demo tools, as the SDK client lists and calls them."""

import base64
import json
import struct
import zlib

import jsonschema
import pytest
from mcp.shared.exceptions import MCPError

from tests.demo.conftest import all_tools, both_eras, connect

TOOL_NAMES = [
    "lookup_customer",
    "search_orders",
    "quote_order",
    "delete_record",
    "issue_refund",
    "export_report",
    "render_chart",
]


def png_header(data: bytes) -> tuple[int, int, int, int]:
    """Width, height, bit depth and colour type, after checking the signature and the IHDR chunk's CRC."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    length, kind = struct.unpack(">I4s", data[8:16])
    assert (length, kind) == (13, b"IHDR")
    body, crc = data[16:29], struct.unpack(">I", data[29:33])[0]
    assert zlib.crc32(b"IHDR" + body) == crc
    return struct.unpack(">IIBB", body[:10])


@both_eras
async def test_it_lists_every_tool_across_pages_of_five(mode, version):
    async with connect(mode) as client:
        first = await client.list_tools()
        listed = list(first.tools)
        second = await client.list_tools(cursor=first.next_cursor)
        listed += second.tools

    assert len(first.tools) == 5 and second.next_cursor is None
    assert [tool.name for tool in listed] == TOOL_NAMES


@both_eras
async def test_it_describes_each_tool_with_a_title_a_schema_and_honest_annotations(mode, version):
    async with connect(mode) as client:
        tools = {tool.name: tool for tool in await all_tools(client)}

    for tool in tools.values():
        assert tool.title and tool.description and tool.annotations is not None
        assert tool.input_schema["type"] == "object"
        jsonschema.Draft202012Validator.check_schema(tool.input_schema)
        for prop in tool.input_schema["properties"].values():
            assert prop["title"] and prop["description"]
        icon = tool.icons[0]
        assert icon.mime_type == "image/png" and icon.src.startswith("data:image/png;base64,")
        assert png_header(base64.b64decode(icon.src.split(",", 1)[1]))[:2] == (24, 24)
    assert tools["lookup_customer"].annotations.read_only_hint is True
    assert tools["lookup_customer"].annotations.open_world_hint is False
    assert tools["delete_record"].annotations.destructive_hint is True
    assert tools["quote_order"].output_schema["required"]
    # Kept by a 2026 client, which must drop a tool whose x-mcp-header is invalid.
    assert tools["search_orders"].input_schema["properties"]["status"]["x-mcp-header"] == "Order-Status"


@both_eras
async def test_it_looks_up_a_customer_by_id_or_by_email(mode, version):
    async with connect(mode) as client:
        by_id = await client.call_tool("lookup_customer", {"customer_id": "C001"})
        by_email = await client.call_tool("lookup_customer", {"email": "ADA.Lindqvist@example.com"})

    assert not by_id.is_error
    assert "Ada Lindqvist <ada.lindqvist@example.com>" in by_id.content[0].text
    assert "O1001" in by_id.content[0].text
    assert by_email.content[0].text == by_id.content[0].text


@both_eras
async def test_it_quotes_an_order_as_structured_content_matching_its_output_schema(mode, version):
    async with connect(mode) as client:
        listed = await client.list_tools()
        result = await client.call_tool("quote_order", {"order_id": "O1001"})

    schema = next(tool for tool in listed.tools if tool.name == "quote_order").output_schema
    quote = result.structured_content
    jsonschema.validate(quote, schema)
    assert quote["order_id"] == "O1001" and quote["currency"] == "EUR"
    assert quote["total"] == pytest.approx(quote["subtotal"] + quote["shipping"] + quote["tax"])
    assert json.loads(result.content[0].text) == quote


@both_eras
async def test_it_draws_a_chart_as_a_png_image(mode, version):
    async with connect(mode) as client:
        result = await client.call_tool("render_chart", {"metric": "orders", "year": 2025})

    text, image = result.content
    assert "Jan" in text.text
    assert image.type == "image" and image.mime_type == "image/png"
    width, height, depth, colour = png_header(base64.b64decode(image.data))
    assert width > 100 and height > 100 and (depth, colour) == (8, 6)


@both_eras
async def test_it_deletes_a_customer_with_their_orders(mode, version):
    async with connect(mode) as client:
        deleted = await client.call_tool("delete_record", {"record_type": "customer", "record_id": "C002"})
        again = await client.call_tool("lookup_customer", {"customer_id": "C002"})
        their_order = await client.call_tool("quote_order", {"order_id": "O1002"})

    assert deleted.content[0].text.startswith("Deleted customer C002 (Bruno Marchetti) and their orders O1002, ")
    assert again.is_error and "No customer has id C002" in again.content[0].text
    assert their_order.is_error and "No order has id O1002" in their_order.content[0].text


@both_eras
async def test_it_answers_invalid_arguments_with_a_result_the_model_can_act_on(mode, version):
    async with connect(mode) as client:
        result = await client.call_tool("delete_record", {"record_type": "order", "record_id": "C001"})

    assert result.is_error
    assert "Invalid arguments for delete_record" in result.content[0].text
    assert "record_id" in result.content[0].text


@both_eras
async def test_it_refuses_an_unknown_tool_with_invalid_params(mode, version):
    async with connect(mode) as client:
        with pytest.raises(MCPError) as refused:
            await client.call_tool("launch_rocket", {})

    assert refused.value.code == -32602
    assert "launch_rocket" in refused.value.error.message


@pytest.mark.parametrize(
    "version, output_schema, icons",
    [
        ("2025-03-26", False, False),
        ("2025-06-18", True, False),
        ("2025-11-25", True, True),
    ],
)
async def test_it_leaves_out_the_fields_a_revision_predates(raw, version, output_schema, icons):
    await raw.initialize(version)

    listed = (await raw.request(1, "tools/list"))["result"]["tools"]
    quoted = (await raw.request(2, "tools/call", {"name": "quote_order", "arguments": {"order_id": "O1001"}}))["result"]

    quote_order = next(tool for tool in listed if tool["name"] == "quote_order")
    assert ("outputSchema" in quote_order) == output_schema
    assert ("structuredContent" in quoted) == output_schema
    assert ("icons" in quote_order) == icons
    assert quote_order["annotations"]["title"] == "Price an order"
