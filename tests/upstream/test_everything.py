"""server-everything, the reference TypeScript server, over stdio and Streamable HTTP (legacy era)."""

import asyncio
import json
import os
import subprocess

import pytest

from approvals.upstream import open_session

pytestmark = pytest.mark.node


@pytest.fixture(params=["stdio", "http"])
def everything(request):
    return request.getfixturevalue("everything_stdio_spec" if request.param == "stdio" else "everything_http")


def raw_tools_list(spec) -> list[dict]:
    """What the server itself sends for tools/list, read straight off its stdout: the oracle."""
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "oracle", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    # server-everything exits when its input ends, after answering what it read.
    done = subprocess.run(
        spec.command,
        input="".join(json.dumps(m) + "\n" for m in messages).encode(),
        capture_output=True,
        env={**os.environ, **spec.env},
        timeout=30,
    )
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    return next(answer["result"]["tools"] for answer in answers if answer.get("id") == 2)


async def test_it_negotiates_the_legacy_era_and_learns_who_the_server_is(everything):
    async with open_session(everything) as session:
        identity = session.identity
    assert identity.era == "legacy" and identity.revision == "2025-11-25"
    assert identity.server_info["name"] == "mcp-servers/everything"
    assert "tools" in identity.capabilities
    assert "Everything Server" in identity.instructions


async def test_it_lists_tools_with_every_field_exactly_as_the_server_sent_them(everything, everything_stdio_spec):
    expected = {tool["name"]: tool for tool in raw_tools_list(everything_stdio_spec)}
    async with open_session(everything) as session:
        tools = await session.list_tools()
    assert {tool["name"]: tool for tool in tools} == expected
    echo = expected["echo"]
    assert echo["title"] == "Echo Tool"
    assert echo["annotations"] == {
        "readOnlyHint": True,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": False,
    }
    assert echo["inputSchema"]["properties"]["message"]["type"] == "string"


async def test_it_calls_tools_and_returns_their_results(everything):
    async with open_session(everything) as session:
        echoed = await session.call_tool("echo", {"message": "hello upstream"})
        summed = await session.call_tool("get-sum", {"a": 2, "b": 40})
    assert echoed["content"] == [{"type": "text", "text": "Echo: hello upstream"}]
    assert summed["content"][0]["text"] == "The sum of 2 and 40 is 42."


async def test_it_offers_no_elicitation_when_nobody_would_answer(everything):
    async with open_session(everything) as session:
        names = {tool["name"] for tool in await session.list_tools()}
    # server-everything registers its eliciting tool only for clients that declared elicitation.
    assert "trigger-elicitation-request" not in names


async def test_it_hands_an_elicitation_to_on_request_and_the_declined_call_still_completes(everything):
    asked = []

    async def on_request(method, params):
        asked.append((method, params))
        return {"action": "decline"}

    async with open_session(everything, on_request=on_request) as session:
        result = await session.call_tool("trigger-elicitation-request", {})
    assert [method for method, _ in asked] == ["elicitation/create"]
    assert "name" in asked[0][1]["requestedSchema"]["properties"]
    assert "declined" in result["content"][0]["text"]


async def test_it_routes_progress_to_the_call_with_the_callers_own_token(everything):
    progress = []

    async def on_notification(method, params):
        progress.append((method, params))

    async with open_session(everything) as session:
        result = await session.call_tool(
            "trigger-long-running-operation",
            {"duration": 0.3, "steps": 3},
            progress_token="client-token-7",
            on_notification=on_notification,
        )
    assert "completed" in result["content"][0]["text"]
    assert [(m, p["progressToken"], p["progress"]) for m, p in progress] == [
        ("notifications/progress", "client-token-7", step) for step in (1, 2, 3)
    ]


async def test_it_delivers_notifications_outside_any_call_to_the_session_handler(everything):
    received = asyncio.Queue()

    async def on_notification(method, params):
        await received.put((method, params))

    async with open_session(everything, on_notification=on_notification) as session:
        await session.call_tool("toggle-simulated-logging", {})
        while (note := await asyncio.wait_for(received.get(), 10))[0] != "notifications/message":
            pass  # such as the list change that follows initialization
    assert "level" in note[1]


async def test_it_answers_ping(everything):
    async with open_session(everything) as session:
        await session.ping()
