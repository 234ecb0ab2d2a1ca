"""A client that stops waiting cancels its call: the call is not run later for nobody."""

import asyncio
import contextlib
import json

import httpx
import pytest

from approvals.audit.models import AuditEvent
from approvals.calls.models import Call
from approvals.live import events
from tests.fixtures.calls import wait_for_pending_call
from tests.fixtures.gateway import LEGACY, MODERN, modern_envelope, sdk_client
from tests.fixtures.waiting import eventually

LOOKUP = {"name": "demo_lookup_customer", "arguments": {"customer_id": "C007"}}


async def cancelled_soon(call_id):
    await eventually(
        Call.objects.filter(pk=call_id, status=Call.Status.CANCELLED).aexists, timeout=3, message="the call cancelled"
    )


async def legacy_session(http: httpx.AsyncClient, url: str, headers: dict) -> str:
    params = {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}
    response = await http.post(
        url, json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}, headers=headers
    )
    return response.headers["Mcp-Session-Id"]


async def first_progress(response: httpx.Response):
    """Reads the stream up to the first progress notification: the call is then waiting for an operator."""
    async for line in response.aiter_lines():
        if line.startswith("data: ") and json.loads(line[len("data: ") :]).get("method") == "notifications/progress":
            return


@pytest.mark.parametrize(
    "era, accept",
    [
        ("modern", "application/json, text/event-stream"),
        ("legacy", "application/json, text/event-stream"),
        ("legacy", "application/json"),
    ],
    ids=["modern-stream", "legacy-stream", "legacy-json"],
)
async def test_it_cancels_a_waiting_call_when_the_client_closes_its_request(
    mcp_url, secret, demo_server, joined_groups, era, accept
):
    headers = {"Authorization": f"Bearer {secret}", "Accept": accept, "Content-Type": "application/json"}
    lookup = {**LOOKUP, "_meta": {"progressToken": "p-1"}}
    async with httpx.AsyncClient(timeout=30) as http:
        if era == "modern":
            params = modern_envelope(**lookup)
            params["_meta"]["progressToken"] = "p-1"
            headers |= {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": LOOKUP["name"]}
        else:
            params = lookup
            headers |= {"MCP-Protocol-Version": LEGACY, "Mcp-Session-Id": await legacy_session(http, mcp_url, headers)}
        body = {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": params}
        if "text/event-stream" in accept:
            async with http.stream("POST", mcp_url, json=body, headers=headers) as response:
                call = await wait_for_pending_call()
                await asyncio.wait_for(first_progress(response), timeout=10)
            # Leaving the block with the stream unread closes the connection.
        else:
            request = asyncio.create_task(http.post(mcp_url, json=body, headers=headers))
            call = await wait_for_pending_call()
            # A JSON answer shows nothing while it waits: the call waits once it listens for its decision.
            await eventually(lambda: events.call_group(call.pk) in joined_groups, message="the call waiting")
            request.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await request

    await cancelled_soon(call.pk)
    event = await AuditEvent.objects.aget(action="call.cancelled", call_id=call.pk)
    assert event.actor_type == "client"
    assert event.data["reason"] == "the client closed the request"


@pytest.mark.parametrize("mode", ["auto", "legacy"], ids=["modern", "legacy"])
async def test_it_cancels_the_call_of_an_sdk_client_that_stops_waiting(mcp_url, secret, demo_server, mode):
    waiting = asyncio.Event()

    async def on_progress(value, total, message):
        waiting.set()

    async with sdk_client(mcp_url, secret, mode) as client:
        answer = asyncio.create_task(client.call_tool(**LOOKUP, progress_callback=on_progress))
        await asyncio.wait_for(waiting.wait(), timeout=10)
        call = await Call.objects.aget()
        answer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await answer
        await cancelled_soon(call.pk)
