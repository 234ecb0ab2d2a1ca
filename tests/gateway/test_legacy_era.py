"""The legacy era: initialize opens a session that every later request names, until DELETE ends it."""

import asyncio
import json
import threading
import time

import pytest
from asgiref.sync import sync_to_async

from approvals.calls.models import Call
from approvals.demo import COMMAND_LINE
from approvals.tokens.credentials import create_token
from approvals.tokens.models import McpSession
from tests.fixtures.calls import wait_for_pending_call
from tests.fixtures.catalog import add_synced_server
from tests.fixtures.gateway import LEGACY
from tests.gateway.conftest import Raw


def error_of(response) -> dict:
    return response.json()["error"]


def test_it_opens_a_session_at_initialize_and_says_what_it_offers(raw):
    params = {
        "protocolVersion": "2025-06-18",
        "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "ide", "version": "1"},
    }

    response = raw.post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})

    result = response.json()["result"]
    assert result["protocolVersion"] == "2025-06-18"
    assert result["capabilities"] == {
        "tools": {"listChanged": True},
        "logging": {},
        "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}},
    }
    assert result["serverInfo"]["name"] == "mcp-approval-console"
    assert result["instructions"]
    session = McpSession.objects.get(pk=response.headers["Mcp-Session-Id"])
    assert len(session.pk) == 64
    assert session.client_info == {"name": "ide", "version": "1"}
    assert session.client_capabilities == {"elicitation": {}}


@pytest.mark.parametrize("requested", ["2024-11-05", "2026-07-28", "someday"])
def test_it_offers_its_newest_legacy_version_for_one_it_cannot_speak_at_initialize(raw, requested):
    params = {"protocolVersion": requested, "capabilities": {}, "clientInfo": {"name": "old", "version": "1"}}

    response = raw.post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})

    assert response.json()["result"]["protocolVersion"] == LEGACY


def test_it_answers_ping_within_a_session(raw):
    session_id = raw.initialize()

    assert raw.legacy(session_id, "ping").json() == {"jsonrpc": "2.0", "id": 1, "result": {}}


def test_it_keeps_the_log_level_a_client_sets_for_its_session(raw):
    session_id = raw.initialize()

    response = raw.legacy(session_id, "logging/setLevel", level="warning")
    wrong = raw.legacy(session_id, "logging/setLevel", level="loud")

    assert response.json()["result"] == {}
    assert McpSession.objects.get(pk=session_id).log_level == "warning"
    assert error_of(wrong)["code"] == -32602


def test_it_refuses_a_request_without_a_session(raw):
    response = raw.post({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, {"MCP-Protocol-Version": LEGACY})

    assert response.status_code == 400
    assert error_of(response)["code"] == -32600
    assert "missing session" in error_of(response)["message"]


def test_it_answers_an_unknown_session_with_404(raw):
    assert raw.legacy("f" * 64, "tools/list").status_code == 404


def test_it_does_not_let_another_token_use_a_session(raw, mcp_url):
    session_id = raw.initialize()
    other = Raw(mcp_url, create_token("another client")[1])

    assert other.legacy(session_id, "tools/list").status_code == 404


def test_it_ends_a_session_at_delete_and_knows_it_no_more(raw):
    session_id = raw.initialize()

    deleted = raw.client.delete(raw.url, headers={**raw.headers, "Mcp-Session-Id": session_id})

    assert deleted.status_code == 204
    assert raw.legacy(session_id, "tools/list").status_code == 404
    assert McpSession.objects.get(pk=session_id).closed_at is not None


def test_it_takes_another_supported_version_header_within_a_session_as_the_conformance_suite_sends(raw):
    session_id = raw.initialize("2025-11-25")

    response = raw.legacy(session_id, "tools/list", headers={"MCP-Protocol-Version": "2025-03-26"})

    assert response.status_code == 200
    assert "tools" in response.json()["result"]


def test_it_refuses_an_unknown_protocol_version_within_a_session(raw):
    session_id = raw.initialize()

    response = raw.legacy(session_id, "tools/list", headers={"MCP-Protocol-Version": "1999-01-01"})

    assert response.status_code == 400
    assert "1999-01-01" in error_of(response)["message"]


def test_it_takes_a_2025_03_26_client_that_sends_no_version_header(raw):
    session_id = raw.initialize("2025-03-26")

    response = raw.post({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, {"Mcp-Session-Id": session_id})

    assert response.status_code == 200
    assert "tools" in response.json()["result"]


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
        {"jsonrpc": "2.0", "id": "s-1", "result": {}},
    ],
    ids=["initialized", "other-notification", "stray-response"],
)
def test_it_accepts_notifications_and_responses_with_202(raw, message):
    session_id = raw.initialize()

    response = raw.post(message, {"Mcp-Session-Id": session_id, "MCP-Protocol-Version": LEGACY})

    assert response.status_code == 202
    assert response.content == b""


def test_it_marks_the_session_initialized(raw):
    session_id = raw.initialize()

    raw.legacy(session_id, "notifications/initialized", msg_id=None)

    assert McpSession.objects.get(pk=session_id).initialized


def test_it_answers_a_call_as_json_to_a_client_that_takes_no_stream(raw, demo_server):
    session_id = raw.initialize()

    response = raw.legacy(session_id, "tools/call", name="demo_nothing_here", headers={"Accept": "application/json"})

    assert response.headers["content-type"] == "application/json"
    assert error_of(response)["code"] == -32602


def test_it_refuses_a_get_stream_to_a_client_that_takes_no_events(raw):
    session_id = raw.initialize()

    response = raw.client.get(
        raw.url, headers={**raw.headers, "Accept": "application/json", "Mcp-Session-Id": session_id}
    )

    assert response.status_code == 406


async def test_it_sends_tools_list_changed_on_the_get_stream_when_the_catalog_changes(raw, demo_server):
    session_id = await sync_to_async(raw.initialize)()
    received = []
    opened = threading.Event()

    def listen():
        headers = {**raw.headers, "Mcp-Session-Id": session_id, "MCP-Protocol-Version": LEGACY}
        with raw.client.stream("GET", raw.url, headers=headers, timeout=20) as response:
            received.append(response.headers["content-type"])
            opened.set()
            for line in response.iter_lines():
                if line.startswith("data: "):
                    received.append(json.loads(line[len("data: ") :]))
                    return

    listener = threading.Thread(target=listen)
    listener.start()
    assert await asyncio.to_thread(opened.wait, 10)
    await sync_to_async(add_synced_server)("second demo", transport="stdio", command=COMMAND_LINE)
    await asyncio.to_thread(listener.join, 15)

    assert received[0].startswith("text/event-stream")
    assert received[1] == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}


def test_it_ends_the_get_stream_of_a_session_that_was_deleted(raw, settings):
    settings.MCP_SSE_KEEPALIVE_SECONDS = 0.2
    session_id = raw.initialize()
    headers = {**raw.headers, "Mcp-Session-Id": session_id}

    with raw.client.stream("GET", raw.url, headers=headers, timeout=10) as response:
        raw.client.delete(raw.url, headers=headers)
        started = time.monotonic()
        lines = list(response.iter_lines())

    # The server ended the stream: reading it to its end took less than the 10 s read timeout.
    assert time.monotonic() - started < 5
    assert lines[0] == ": stream open"


async def test_it_cancels_a_pending_call_named_by_notifications_cancelled(raw, demo_server):
    session_id = await sync_to_async(raw.initialize)()
    caller = Raw(raw.url, raw.headers["Authorization"].removeprefix("Bearer "))
    answer = asyncio.create_task(
        asyncio.to_thread(
            caller.legacy,
            session_id,
            "tools/call",
            msg_id=7,
            name="demo_lookup_customer",
            arguments={"customer_id": "C007"},
        )
    )
    call = await wait_for_pending_call()

    cancelled = await sync_to_async(raw.legacy)(
        session_id, "notifications/cancelled", msg_id=None, requestId=7, reason="the user changed their mind"
    )
    response = await asyncio.wait_for(answer, timeout=15)

    assert cancelled.status_code == 202
    call = await Call.objects.aget(pk=call.pk)
    assert call.status == Call.Status.CANCELLED
    assert call.reason == "the user changed their mind"
    last = json.loads([line for line in response.text.splitlines() if line.startswith("data: ")][-1][len("data: ") :])
    assert last["id"] == 7
    assert last["result"]["isError"] is True
    assert "cancelled" in last["result"]["content"][0]["text"]
