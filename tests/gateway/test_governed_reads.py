"""Resource reads and prompt gets that policy rules name, through the official SDK client in both modes and raw HTTP."""

import asyncio
import json

import httpx
import httpx2
import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import User
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from approvals.audit.models import AuditEvent
from approvals.calls import deciding, ending
from approvals.calls.models import Call
from approvals.catalog.models import Server
from approvals.policy import rules
from approvals.policy.models import PolicyRule
from approvals.protocol.headers import request_headers
from approvals.tokens.models import ClientToken
from tests.fixtures.gateway import MODERN, modern_envelope, sdk_client
from tests.gateway.conftest import Raw

both_modes = pytest.mark.parametrize("mode", ["auto", "legacy"], ids=["modern", "legacy"])


def add_rule(action, applies_to, pattern, **fields):
    request = rules.RuleRequest(action=action, applies_to=applies_to, tool_glob=pattern, **fields)
    return rules.create_rule(request)


@pytest.fixture
def docs_open_rest_asked(surface_server):
    """Anyone may read file://docs/*; any other read of the surface server waits for an operator."""
    add_rule("allow", "resource", "file://docs/*", name="docs are public")
    add_rule("ask", "resource", "*", server="surface", name="ask before other reads")


def actions(call: Call) -> list[str]:
    return list(AuditEvent.objects.filter(call_id=call.pk).order_by("seq").values_list("action", flat=True))


async def one_in(status) -> Call:
    for _ in range(200):
        call = await Call.objects.filter(status=status).afirst()
        if call is not None:
            return call
        await asyncio.sleep(0.05)
    raise AssertionError(f"no read became {status}")


async def decided_when_pending(approve: bool, reason: str = "") -> Call:
    """Wait for the one held read, then decide it as operator ann."""
    operator = await User.objects.acreate(username="ann")
    call = await one_in(Call.Status.PENDING)
    await sync_to_async(deciding.decide)(call.pk, operator, approve, reason)
    return call


@both_modes
async def test_an_allow_rule_lets_a_read_under_its_uri_pattern_through_at_once(
    mcp_url, secret, docs_open_rest_asked, mode
):
    async with sdk_client(mcp_url, secret, mode) as client:
        guide = await client.read_resource("file://docs/guide.md")

    assert guide.contents[0].text == "# Guide"
    call = await Call.objects.aget()
    assert (call.kind, call.status, call.rule_name) == ("resource", "completed", "docs are public")
    assert call.arguments == {"uri": "file://docs/guide.md"}
    assert await sync_to_async(actions)(call) == ["call.received", "call.policy", "call.forwarded", "call.completed"]


@both_modes
async def test_a_read_an_ask_rule_names_waits_for_an_operator_and_the_client_gets_the_contents(
    mcp_url, secret, docs_open_rest_asked, mode
):
    async with sdk_client(mcp_url, secret, mode) as client:
        reading = asyncio.ensure_future(client.read_resource("docs://readme"))
        held = await decided_when_pending(True)
        readme = await reading

    assert readme.contents[0].text == "A server of resources and prompts."
    call = await Call.objects.aget(pk=held.pk)
    assert (call.kind, call.status, call.decided_by_name, call.tool_name) == (
        "resource",
        "completed",
        "ann",
        "docs://readme",
    )
    expected = ["call.received", "call.policy", "call.pending", "call.approved", "call.forwarded", "call.completed"]
    assert await sync_to_async(actions)(call) == expected


@both_modes
async def test_an_operators_denial_reaches_the_client_as_an_error_with_the_reason(
    mcp_url, secret, docs_open_rest_asked, mode
):
    async with sdk_client(mcp_url, secret, mode) as client:
        reading = asyncio.ensure_future(client.read_resource("notes://n/3"))
        await decided_when_pending(False, "notes are private this week")
        with pytest.raises(MCPError) as raised:
            await reading

    assert "notes are private this week" in raised.value.error.message
    assert "denied by operator ann" in raised.value.error.message


@both_modes
async def test_a_deny_rules_message_reaches_the_client_as_an_error(mcp_url, secret, surface_server, mode):
    await sync_to_async(add_rule)("deny", "resource", "notes://*", name="no notes", message="Notes hold customer data.")

    async with sdk_client(mcp_url, secret, mode) as client:
        with pytest.raises(MCPError) as raised:
            await client.read_resource("notes://n/1")
        readme = await client.read_resource("docs://readme")

    assert raised.value.error.code == -32600
    assert "Notes hold customer data." in raised.value.error.message
    assert raised.value.error.data == {"status": "denied", "reason": "Notes hold customer data."}
    assert readme.contents[0].text  # no rule names it: allowed, as before any rule
    denied = await Call.objects.aget()
    assert (denied.kind, denied.status, denied.tool_name) == ("resource", "denied", "notes://n/1")
    assert await sync_to_async(actions)(denied) == ["call.received", "call.policy", "call.denied"]


@both_modes
async def test_a_prompt_is_denied_by_name_and_the_others_are_not(mcp_url, secret, surface_server, mode):
    await sync_to_async(add_rule)("deny", "prompt", "surface_review_code", message="Code reviews go through the bot.")

    async with sdk_client(mcp_url, secret, mode) as client:
        with pytest.raises(MCPError) as raised:
            await client.get_prompt("surface_review_code", {"code": "print(1)"})
        greeting = await client.get_prompt("surface_greeting")

    assert "Code reviews go through the bot." in raised.value.error.message
    assert greeting.messages[0].content.text == "Hello!"
    denied = await Call.objects.aget()
    assert (denied.kind, denied.tool_name, denied.arguments) == ("prompt", "surface_review_code", {"code": "print(1)"})


async def test_reads_and_prompts_no_rule_names_are_not_recorded_as_calls(mcp_url, secret, surface_server):
    await sync_to_async(add_rule)("deny", "tool", "*")
    await sync_to_async(add_rule)("deny", "prompt", "surface_review_code", server="surface")

    async with sdk_client(mcp_url, secret) as client:
        await client.read_resource("docs://readme")
        await client.get_prompt("surface_greeting")

    assert not await Call.objects.aexists()
    assert await AuditEvent.objects.filter(action="resource.read", data__outcome="answered").aexists()


async def test_a_rule_on_another_server_leaves_the_read_alone(mcp_url, secret, surface_server):
    await Server.objects.acreate(name="Elsewhere", transport="http", url="https://elsewhere.example/mcp")
    await sync_to_async(add_rule)("deny", "resource", "*", server="Elsewhere")

    async with sdk_client(mcp_url, secret) as client:
        readme = await client.read_resource("docs://readme")

    assert readme.contents[0].text
    assert not await Call.objects.aexists()


async def test_a_held_prompt_no_operator_decides_expires_and_the_client_is_told(mcp_url, secret, surface_server):
    await sync_to_async(add_rule)("ask", "prompt", "surface_greeting", approval_timeout_seconds=1)

    async with sdk_client(mcp_url, secret) as client:
        with pytest.raises(MCPError) as raised:
            await client.get_prompt("surface_greeting")

    assert "The prompt surface_greeting was not run: no operator decided within 1 seconds" in raised.value.error.message
    assert raised.value.error.data["status"] == "expired"
    assert (await Call.objects.aget()).status == Call.Status.EXPIRED


def read_request(uri: str, secret: str, **meta) -> dict:
    """A 2026-07-28 client's resources/read that takes an SSE stream: the request's body and headers."""
    params = {"uri": uri}
    envelope = modern_envelope(**params)
    envelope["_meta"] |= meta
    body = {"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": envelope}
    headers = {"Authorization": f"Bearer {secret}", "Accept": "application/json, text/event-stream"}
    return {"json": body, "headers": headers | request_headers(MODERN, "resources/read", params)}


def messages(lines: list[str]) -> list[dict]:
    return [json.loads(line.removeprefix("data: ")) for line in lines if line.startswith("data: ")]


async def test_a_held_read_waits_on_a_stream_of_keep_alives_and_progress_then_ends_with_the_contents(
    mcp_url, secret, docs_open_rest_asked, settings
):
    settings.MCP_SSE_KEEPALIVE_SECONDS = 0.2
    lines = []
    async with httpx.AsyncClient(timeout=30) as http:
        request = read_request("docs://readme", secret, progressToken="r-1")
        async with http.stream("POST", mcp_url, **request) as response:
            assert response.headers["content-type"].startswith("text/event-stream")
            async for line in response.aiter_lines():
                lines.append(line)
                if line == ": keep-alive" and lines.count(line) == 3:
                    await decided_when_pending(True)

    waiting, answer = messages(lines)[0], messages(lines)[-1]
    assert waiting["method"] == "notifications/progress" and waiting["params"]["progressToken"] == "r-1"
    assert answer["id"] == 1
    assert answer["result"]["contents"][0]["text"] == "A server of resources and prompts."


@both_modes
async def test_a_held_read_outlasts_a_clients_idle_timeout_through_keep_alives(
    mcp_url, secret, docs_open_rest_asked, settings, mode
):
    settings.MCP_SSE_KEEPALIVE_SECONDS = 0.1
    # A client that gives up on a second of silence, as proxies and many clients do (after longer ones: both timings
    # shortened alike, the keep-alives as many times more frequent).
    impatient = httpx2.Timeout(30, read=1)
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {secret}"}, timeout=impatient)
    async with Client(streamable_http_client(mcp_url, http_client=http), mode=mode) as client:
        reading = asyncio.ensure_future(client.read_resource("docs://readme"))
        await one_in(Call.Status.PENDING)
        await asyncio.sleep(2.5)
        await decided_when_pending(True)
        readme = await reading

    assert readme.contents[0].text == "A server of resources and prompts."


async def test_a_read_no_rule_names_is_answered_as_one_json_body(mcp_url, secret, docs_open_rest_asked):
    await PolicyRule.objects.filter(applies_to="resource").adelete()

    async with httpx.AsyncClient(timeout=30) as http:
        response = await http.post(mcp_url, **read_request("docs://readme", secret))

    assert response.headers["content-type"] == "application/json"
    assert response.json()["result"]["contents"][0]["text"] == "A server of resources and prompts."


async def test_a_client_that_closes_the_stream_cancels_its_held_read(mcp_url, secret, docs_open_rest_asked):
    request = read_request("docs://readme", secret)
    async with httpx.AsyncClient(timeout=30) as http, http.stream("POST", mcp_url, **request) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        held = await one_in(Call.Status.PENDING)

    cancelled = await one_in(Call.Status.CANCELLED)
    assert cancelled.pk == held.pk and cancelled.reason == "the client closed the request"
    assert (await sync_to_async(actions)(cancelled))[-1] == "call.cancelled"


async def test_a_read_that_would_wait_past_the_tokens_cap_is_refused_unrecorded(mcp_url, secret, docs_open_rest_asked):
    await ClientToken.objects.aupdate(max_pending_calls=1)

    async with sdk_client(mcp_url, secret) as client:
        first = asyncio.ensure_future(client.read_resource("docs://readme"))
        held = await one_in(Call.Status.PENDING)
        with pytest.raises(MCPError) as raised:
            await client.read_resource("notes://n/2")
        await sync_to_async(ending.end_pending)(held.pk, Call.Status.CANCELLED, "the test is over")
        with pytest.raises(MCPError):
            await first

    assert "The read of notes://n/2 was not run" in raised.value.error.message
    assert raised.value.error.data == {"status": "refused"}
    assert await Call.objects.acount() == 1
    assert await AuditEvent.objects.filter(action="call.refused").aexists()


async def test_a_legacy_client_cancels_its_held_read_by_notifications_cancelled(raw, docs_open_rest_asked):
    session_id = await sync_to_async(raw.initialize)()
    caller = Raw(raw.url, raw.headers["Authorization"].removeprefix("Bearer "))
    answer = asyncio.create_task(
        asyncio.to_thread(caller.legacy, session_id, "resources/read", msg_id=9, uri="docs://readme")
    )
    held = await one_in(Call.Status.PENDING)

    await sync_to_async(raw.legacy)(session_id, "notifications/cancelled", msg_id=None, requestId=9, reason="enough")
    response = await asyncio.wait_for(answer, timeout=15)

    assert response.headers["content-type"].startswith("text/event-stream")
    (answered,) = messages(response.text.splitlines())
    assert answered["error"]["message"] == "The read of docs://readme was cancelled: enough."
    assert (await Call.objects.aget(pk=held.pk)).status == Call.Status.CANCELLED
