"""Open SSE streams are capped per token and per legacy session; past the cap a request is refused in JSON-RPC."""

import asyncio
import contextlib

import httpx
import pytest

from approvals.audit.models import AuditEvent
from approvals.calls.models import Call
from approvals.gateway.streams import OPEN_STREAMS
from approvals.policy.models import PolicyRule
from approvals.protocol.headers import request_headers
from approvals.tokens.models import ClientToken
from tests.fixtures.calls import every_call_ended, wait_for_pending_call
from tests.fixtures.gateway import LEGACY, MODERN, modern_envelope, sdk_client
from tests.fixtures.waiting import eventually

STREAMING = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def listen_request(secret):
    headers = {
        **STREAMING,
        "Authorization": f"Bearer {secret}",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "subscriptions/listen",
    }
    params = modern_envelope(notifications={"toolsListChanged": True})
    return {"json": {"jsonrpc": "2.0", "id": 9, "method": "subscriptions/listen", "params": params}, "headers": headers}


async def opened(response: httpx.Response):
    """Reads up to the stream's opening comment; the stream stays open while the caller keeps what this returns.

    (httpx closes a response when the iterator reading it is collected.)
    """
    lines = response.aiter_lines()
    async for line in lines:
        if line.startswith(":"):
            return lines


def open_streams(token_pk) -> int:
    return OPEN_STREAMS.count("token", token_pk)


@pytest.fixture
def token_pk(secret):
    return ClientToken.objects.get(name="test client").pk


async def test_it_refuses_a_stream_past_the_tokens_cap_with_429_and_a_json_rpc_error(mcp_url, secret, settings):
    settings.MCP_MAX_STREAMS_PER_TOKEN = 1
    async with (
        httpx.AsyncClient(timeout=30) as http,
        http.stream("POST", mcp_url, **listen_request(secret)) as first,
    ):
        reading = await asyncio.wait_for(opened(first), timeout=10)
        refused = await http.post(mcp_url, **listen_request(secret))
        await reading.aclose()

    assert refused.status_code == 429
    error = refused.json()["error"]
    assert refused.json()["id"] == 9
    assert (
        error["message"]
        == "Too many open streams: this client token has 1 streams open, the most it may; close one first"
    )


async def test_it_gives_the_place_back_when_the_client_closes_its_stream(mcp_url, secret, token_pk, settings):
    settings.MCP_MAX_STREAMS_PER_TOKEN = 1
    async with httpx.AsyncClient(timeout=30) as http:
        async with http.stream("POST", mcp_url, **listen_request(secret)) as first:
            reading = await asyncio.wait_for(opened(first), timeout=10)
            assert open_streams(token_pk) == 1
            await reading.aclose()
        await eventually(lambda: open_streams(token_pk) == 0, message="the closed stream released")
        async with http.stream("POST", mcp_url, **listen_request(secret)) as second:
            assert second.status_code == 200


async def test_it_caps_the_streams_of_one_legacy_session_apart_from_the_tokens_other_sessions(
    mcp_url, secret, settings
):
    settings.MCP_MAX_STREAMS_PER_SESSION = 1
    auth = {**STREAMING, "Authorization": f"Bearer {secret}", "MCP-Protocol-Version": LEGACY}
    async with httpx.AsyncClient(timeout=30) as http:

        async def session() -> str:
            params = {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}
            body = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
            return (await http.post(mcp_url, json=body, headers=auth)).headers["Mcp-Session-Id"]

        one, two = await session(), await session()
        async with http.stream("GET", mcp_url, headers={**auth, "Mcp-Session-Id": one}) as first:
            reading = await asyncio.wait_for(opened(first), timeout=10)
            again = await http.get(mcp_url, headers={**auth, "Mcp-Session-Id": one})
            async with http.stream("GET", mcp_url, headers={**auth, "Mcp-Session-Id": two}) as other:
                other_status = other.status_code
            await reading.aclose()

    assert again.status_code == 429
    assert "this MCP session has 1 streams open" in again.json()["error"]["message"]
    assert again.headers["Mcp-Session-Id"] == one
    assert other_status == 200


async def test_it_counts_a_waiting_calls_stream_and_refuses_the_sdk_clients_next_stream(
    mcp_url, secret, demo_server, settings
):
    settings.MCP_MAX_STREAMS_PER_TOKEN = 1
    async with sdk_client(mcp_url, secret) as client:
        waiting = asyncio.create_task(client.call_tool("demo_lookup_customer", {"customer_id": "C007"}))
        await wait_for_pending_call()
        with pytest.raises(Exception, match="Too many open streams"):
            await asyncio.wait_for(client.call_tool("demo_lookup_customer", {"customer_id": "C008"}), timeout=15)
        waiting.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await waiting
    await every_call_ended()


async def test_it_answers_an_allowed_call_past_the_tokens_cap_as_json(mcp_url, secret, demo_server, settings):
    settings.MCP_MAX_STREAMS_PER_TOKEN = 1
    await PolicyRule.objects.acreate(name="lookups", action="allow", tool_glob="demo_lookup_customer")
    params = {"name": "demo_lookup_customer", "arguments": {"customer_id": "C007"}}
    call = {
        "json": {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": modern_envelope(**params)},
        "headers": {**STREAMING, "Authorization": f"Bearer {secret}", **request_headers(MODERN, "tools/call", params)},
    }
    async with (
        httpx.AsyncClient(timeout=30) as http,
        http.stream("POST", mcp_url, **listen_request(secret)) as first,
    ):
        reading = await asyncio.wait_for(opened(first), timeout=10)
        answered = await http.post(mcp_url, **call)
        await reading.aclose()

    assert answered.status_code == 200
    assert answered.headers["content-type"].startswith("application/json")
    assert not answered.json()["result"].get("isError")
    assert await Call.objects.filter(status=Call.Status.COMPLETED).acount() == 1


async def test_it_refuses_a_call_that_would_wait_past_the_cap_and_records_nothing_of_it(
    mcp_url, secret, demo_server, settings
):
    settings.MCP_MAX_STREAMS_PER_TOKEN = 1
    params = {"name": "demo_lookup_customer", "arguments": {"customer_id": "C007"}}
    call = {
        "json": {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": modern_envelope(**params)},
        "headers": {**STREAMING, "Authorization": f"Bearer {secret}", **request_headers(MODERN, "tools/call", params)},
    }
    events_before = await AuditEvent.objects.acount()
    async with (
        httpx.AsyncClient(timeout=30) as http,
        http.stream("POST", mcp_url, **listen_request(secret)) as first,
    ):
        reading = await asyncio.wait_for(opened(first), timeout=10)
        refused = await http.post(mcp_url, **call)
        await reading.aclose()

    assert refused.status_code == 429
    assert refused.json()["id"] == 5
    assert "this client token has 1 streams open" in refused.json()["error"]["message"]
    assert not await Call.objects.aexists()
    assert await AuditEvent.objects.acount() == events_before
