"""A server built with the official Python SDK: the modern era (2026-07-28), and legacy on request."""

import dataclasses

import pytest

from approvals.upstream import UpstreamError, open_session


def accepting(confirm=True, asked=None):
    async def on_request(method, params):
        if asked is not None:
            asked.append((method, params))
        return {"action": "accept", "content": {"confirm": confirm}}

    return on_request


async def test_it_negotiates_2026_07_28_through_server_discover(sdk_server):
    async with open_session(sdk_server) as session:
        identity = session.identity
    assert (identity.era, identity.revision) == ("modern", "2026-07-28")
    assert identity.server_info == {"name": "sdk-test-server", "version": "1.0.0"}
    assert "tools" in identity.capabilities
    assert identity.instructions == "A server for the console's upstream tests."


async def test_it_lists_tools_with_output_schemas_annotations_and_header_annotations(sdk_server):
    async with open_session(sdk_server) as session:
        tools = {tool["name"]: tool for tool in await session.list_tools()}
    assert set(tools) == {"echo", "weather", "regional_lookup", "delete_record", "slow_count"}
    assert tools["echo"]["title"] == "Echo"
    assert tools["echo"]["annotations"] == {"readOnlyHint": True, "openWorldHint": False}
    assert tools["weather"]["outputSchema"]["required"] == ["city", "temperature", "conditions"]
    assert tools["regional_lookup"]["inputSchema"]["properties"]["region"]["x-mcp-header"] == "Region"


async def test_it_calls_a_plain_tool_and_one_with_structured_content(sdk_server):
    async with open_session(sdk_server) as session:
        echoed = await session.call_tool("echo", {"message": "hi"})
        weather = await session.call_tool("weather", {"city": "Oslo"})
    assert echoed["content"] == [{"type": "text", "text": "hi"}]
    assert echoed["resultType"] == "complete"
    assert weather["structuredContent"] == {"city": "Oslo", "temperature": 21.5, "conditions": "sunny"}


async def test_it_mirrors_x_mcp_header_arguments_into_headers_the_server_accepts(sdk_server):
    async with open_session(sdk_server) as session:
        tool = next(t for t in await session.list_tools() if t["name"] == "regional_lookup")
        plain = await session.call_tool("regional_lookup", {"region": "eu-west", "query": "q"}, tool=tool)
        unsafe = await session.call_tool("regional_lookup", {"region": " zürich", "query": "q"}, tool=tool)
    assert plain["content"][0]["text"] == "q in eu-west; header: eu-west"
    assert unsafe["content"][0]["text"] == "q in  zürich; header: =?base64?IHrDvHJpY2g=?="


async def test_it_reports_the_servers_refusal_when_the_tool_definition_is_not_given(sdk_server):
    async with open_session(sdk_server) as session:
        with pytest.raises(UpstreamError) as caught:
            await session.call_tool("regional_lookup", {"region": "eu-west", "query": "q"})
    assert caught.value.code == -32020 and not caught.value.retryable
    assert "Mcp-Param-Region" in caught.value.message


async def test_it_answers_input_required_through_on_request_and_retries_to_completion(sdk_server):
    asked = []
    async with open_session(sdk_server, on_request=accepting(asked=asked)) as session:
        result = await session.call_tool("delete_record", {"target": "r1"})
    assert result["content"][0]["text"] == "deleted r1"
    [(method, params)] = asked
    assert method == "elicitation/create" and params["message"] == "Really delete r1?"


@pytest.mark.parametrize("revision", ["2026-07-28", "2025-06-18"])
async def test_it_prefers_the_calls_own_on_request_to_the_sessions_in_either_era(sdk_server, revision):
    async with open_session(dataclasses.replace(sdk_server, revision=revision), on_request=accepting()) as session:
        assert session.identity.revision == revision
        result = await session.call_tool("delete_record", {"target": "r2"}, on_request=accepting(confirm=False))
    assert result["content"][0]["text"] == "kept r2 (accept)"


async def test_it_forces_the_legacy_era_when_the_spec_remembers_a_legacy_revision(sdk_server):
    spec = dataclasses.replace(sdk_server, revision="2025-06-18")
    asked = []
    async with open_session(spec, on_request=accepting(asked=asked)) as session:
        identity = session.identity
        weather = await session.call_tool("weather", {"city": "Oslo"})
        deleted = await session.call_tool("delete_record", {"target": "r3"})
    assert (identity.era, identity.revision) == ("legacy", "2025-06-18")
    assert weather["structuredContent"]["conditions"] == "sunny"
    # In the legacy era the same question arrives as a server-to-client request on the call's stream.
    assert deleted["content"][0]["text"] == "deleted r3"
    assert [method for method, _ in asked] == ["elicitation/create"]


async def test_it_resumes_a_legacy_stream_the_server_closed_and_loses_no_progress(sdk_server):
    spec = dataclasses.replace(sdk_server, revision="2025-11-25")
    progress = []

    async def on_notification(method, params):
        progress.append(params["progress"])

    async with open_session(spec) as session:
        result = await session.call_tool(
            "slow_count", {"steps": 4}, progress_token="p", on_notification=on_notification
        )
    assert result["content"][0]["text"] == "counted to 4"
    assert progress == [1, 2, 3, 4]


async def test_it_speaks_the_modern_era_over_stdio_too(sdk_stdio_spec):
    async with open_session(sdk_stdio_spec, on_request=accepting(confirm=False)) as session:
        assert session.identity.era == "modern"
        weather = await session.call_tool("weather", {"city": "Bergen"})
        kept = await session.call_tool("delete_record", {"target": "r4"})
        await session.ping()
    assert weather["structuredContent"]["city"] == "Bergen"
    assert kept["content"][0]["text"] == "kept r4 (accept)"
