"""stdio servers that misbehave, each in one way, and what the client makes of it."""

import asyncio
import contextlib
import json
import os
import secrets
import sys
import time

import pytest

from approvals.upstream import ServerSpec, UpstreamError, open_session
from tests.fixtures.servers import scenario_spec
from tests.fixtures.waiting import eventually


async def test_it_reports_a_command_that_exits_at_once_with_its_stderr():
    spec = ServerSpec(
        name="broken",
        transport="stdio",
        timeout=5,
        command=(
            sys.executable,
            "-c",
            "import sys; sys.stderr.write('fatal: MISSING_API_KEY is not set\\n'); sys.exit(3)",
        ),
    )
    with pytest.raises(UpstreamError) as caught:
        async with open_session(spec):
            pass
    assert caught.value.retryable
    assert "exited with code 3" in caught.value.message
    assert "MISSING_API_KEY is not set" in caught.value.message


async def test_it_reports_a_command_that_does_not_exist_as_not_retryable():
    spec = ServerSpec(name="typo", transport="stdio", command=("/nonexistent/mcp-server",))
    with pytest.raises(UpstreamError) as caught:
        async with open_session(spec):
            pass
    assert not caught.value.retryable and "cannot start" in caught.value.message


async def test_it_gives_up_on_a_server_that_never_answers_after_the_timeout():
    started = time.monotonic()
    with pytest.raises(UpstreamError) as caught:
        async with open_session(scenario_spec("silent", timeout=0.5)):
            pass
    assert caught.value.retryable and "within 0.5s" in caught.value.message
    assert time.monotonic() - started < 3


async def test_it_refuses_a_line_that_is_not_json_with_a_clear_message():
    async with open_session(scenario_spec("garbage")) as session:
        with pytest.raises(UpstreamError) as caught:
            await session.list_tools()
    assert not caught.value.retryable
    assert "malformed message" in caught.value.message and "this is not JSON" in caught.value.message


async def test_it_declines_by_default_what_a_server_asks_even_unprompted_and_answers_ping():
    notes = []

    async def on_notification(method, params):
        notes.append((method, params))

    async with open_session(scenario_spec("pushy"), on_notification=on_notification) as session:
        call_notes = []

        async def on_call_notification(method, params):
            call_notes.append((method, params))

        result = await session.call_tool("ask", {}, progress_token="mine", on_notification=on_call_notification)
    report = json.loads(result["content"][0]["text"])
    assert report["elicitation"]["result"] == {"action": "decline"}
    assert report["sampling"]["error"]["code"] == -32601
    assert report["ping"]["result"] == {}
    assert ("notifications/message", {"level": "info", "data": "asking"}) in notes
    # On stdio a progress token ties a notification to its call; a log line is
    # the call's only while it is the one call running.
    assert call_notes == [
        ("notifications/message", {"level": "info", "data": "asking"}),
        ("notifications/progress", {"progressToken": "mine", "progress": 1, "total": 2}),
    ]


async def test_it_retries_input_required_with_a_new_id_the_answers_and_the_state_echoed_exactly():
    async def on_request(method, params):
        return {"action": "accept", "content": {"ok": True}}

    async with open_session(scenario_spec("mrtr"), on_request=on_request) as session:
        assert session.identity.era == "modern"
        result = await session.call_tool("confirm", {})
    report = json.loads(result["content"][0]["text"])
    assert report["problems"] == []
    assert report["inputResponses"] == {"confirm": {"action": "accept", "content": {"ok": True}}}
    assert report["meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
    assert report["meta"]["io.modelcontextprotocol/clientInfo"]["name"] == "mcp-approval-console"
    assert report["meta"]["io.modelcontextprotocol/clientCapabilities"] == {
        "elicitation": {"form": {}, "url": {}},
        "sampling": {},
    }


async def test_it_declines_an_input_request_by_default_and_declares_no_capabilities():
    async with open_session(scenario_spec("mrtr")) as session:
        result = await session.call_tool("confirm", {})
    report = json.loads(result["content"][0]["text"])
    assert report["inputResponses"] == {"confirm": {"action": "decline"}}
    assert report["meta"]["io.modelcontextprotocol/clientCapabilities"] == {}


async def test_it_stops_after_a_bounded_number_of_input_rounds():
    async with open_session(scenario_spec("mrtr-forever")) as session:
        with pytest.raises(UpstreamError) as caught:
            await session.call_tool("confirm", {})
    assert "after 10 rounds" in caught.value.message and not caught.value.retryable


async def test_it_refuses_a_cursor_it_has_seen_before():
    async with open_session(scenario_spec("pages-loop")) as session:
        with pytest.raises(UpstreamError) as caught:
            await session.list_tools()
    assert "'again' twice" in caught.value.message


async def test_it_caps_the_number_of_pages():
    async with open_session(scenario_spec("pages-many", list_max_pages=5)) as session:
        with pytest.raises(UpstreamError) as caught:
            await session.list_tools()
    assert "list_max_pages (5)" in caught.value.message and not caught.value.retryable


async def test_it_caps_the_bytes_of_a_listing():
    async with open_session(scenario_spec("pages-many", list_max_bytes=300)) as session:
        with pytest.raises(UpstreamError) as caught:
            await session.list_tools()
    assert "list_max_bytes (300 bytes)" in caught.value.message and not caught.value.retryable


def processes_named(marker: str) -> list[str]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError), open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            if marker.encode() in cmdline.read():
                found.append(pid)
    return found


@pytest.mark.parametrize("delay", [0, 0.0005, 0.001, 0.002, 0.005, 0.02])
async def test_it_ends_a_start_cut_short_and_stops_what_the_server_started(delay):
    # What the server starts keeps its pipes open: a spawn cancelled midway must not wait for them to close.
    marker = f"{300 + secrets.randbelow(10**6) / 10**7:.7f}"
    spec = ServerSpec(name="forking", transport="stdio", command=("sh", "-c", f"sleep {marker} & exec sleep {marker}"))
    opening = asyncio.ensure_future(open_session(spec).__aenter__())
    await asyncio.sleep(delay)
    opening.cancel()
    async with asyncio.timeout(20):
        await asyncio.gather(opening, return_exceptions=True)
    assert opening.cancelled()
    await eventually(lambda: not processes_named(marker), message="what the server started, stopped")
