"""Approved calls reach a real upstream server (the demo server, over stdio)."""

import asyncio

import pytest
from asgiref.sync import sync_to_async

from approvals import demo
from approvals.actions import servers
from approvals.audit.chain import Actor
from approvals.audit.models import AuditEvent
from approvals.calls import deciding, ending, lifecycle, runner, upstream_sessions
from approvals.calls.models import Call
from approvals.catalog import sync
from approvals.catalog.models import Tool
from approvals.policy.models import PolicyRule
from approvals.protocol import revisions
from approvals.tokens.context import ClientContext
from tests.fixtures.calls import wait_for_pending_call

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def demo_server(db):
    server = servers.add_server(
        name="Demo",
        transport="stdio",
        command=demo.COMMAND_LINE,
        trusted=True,
        accept_tools=True,
        schedule_sync=False,
    )
    assert sync.sync_server(server).ok
    PolicyRule.objects.create(action="allow", tool_glob="*")
    return server


@pytest.fixture
async def run(client_token):
    async def emit(message):
        sent.append(message)

    sent = []

    async def call(name, arguments, **meta):
        ctx = ClientContext(client_token, revisions.MODERN, "2026-07-28")
        params = {"name": name, "arguments": arguments, "_meta": meta}
        return await asyncio.wait_for(runner.run_call(ctx, 1, params, emit), 30)

    call.sent = sent
    yield call
    await upstream_sessions.session_pool().close_all()


async def test_it_forwards_an_allowed_call_and_returns_the_result(demo_server, run):
    result = await run("demo_lookup_customer", {"customer_id": "C007"})
    assert not result.get("isError")
    assert "C007" in result["content"][0]["text"]
    call = await Call.objects.aget()
    assert call.status == Call.Status.COMPLETED
    actions = [
        a async for a in AuditEvent.objects.filter(call_id=call.pk).order_by("seq").values_list("action", flat=True)
    ]
    assert actions == ["call.received", "call.policy", "call.forwarded", "call.completed"]


async def test_it_passes_structured_content_that_matches_the_output_schema(demo_server, run):
    result = await run("demo_quote_order", {"order_id": "O1012"})
    assert not result.get("isError"), result
    assert set(result["structuredContent"]) >= {"order_id", "total"}


async def test_it_relays_upstream_progress_under_the_clients_token(demo_server, run):
    result = await run("demo_export_report", {"report": "orders", "seconds": 1}, progressToken="mine")
    assert not result.get("isError"), result
    progress = [m for m in run.sent if m["method"] == "notifications/progress"]
    assert progress and all(m["params"]["progressToken"] == "mine" for m in progress)


async def test_it_refuses_to_run_a_call_whose_tool_changed_while_it_waited(demo_server, run, operators):
    await PolicyRule.objects.all().adelete()
    waiting = asyncio.create_task(run("demo_lookup_customer", {"customer_id": "C007"}))
    await wait_for_pending_call()
    await Tool.objects.filter(exposed_name="demo_lookup_customer").aupdate(digest="0" * 64)
    call = await Call.objects.aget()
    assert (await sync_to_async(deciding.decide)(call.pk, operators[0], True)).won
    result = await waiting
    assert result["isError"] is True
    assert "definition changed" in result["content"][0]["text"]


async def test_it_records_an_approved_call_forwarded_before_its_answer(demo_server, run, operators):
    await PolicyRule.objects.all().adelete()
    waiting = asyncio.create_task(run("demo_lookup_customer", {"customer_id": "C007"}))
    await wait_for_pending_call()
    call = await Call.objects.aget()
    assert (await sync_to_async(deciding.decide)(call.pk, operators[0], True)).won
    result = await waiting
    assert "C007" in result["content"][0]["text"]
    call = await Call.objects.aget()
    assert call.decided_at <= call.forwarded_at <= call.answered_at
    actions = [
        a async for a in AuditEvent.objects.filter(call_id=call.pk).order_by("seq").values_list("action", flat=True)
    ]
    assert actions == [
        "call.received",
        "call.policy",
        "call.pending",
        "call.approved",
        "call.forwarded",
        "call.completed",
    ]


async def test_it_does_not_answer_an_approved_call_cancelled_before_it_was_forwarded(
    demo_server, client_token, operators
):
    await PolicyRule.objects.all().adelete()
    tool = await Tool.objects.select_related("server").aget(exposed_name="demo_lookup_customer")
    ctx = ClientContext(client_token, revisions.MODERN, "2026-07-28")
    call, _ = await sync_to_async(lifecycle.receive_call)(ctx, tool, {"customer_id": "C007"}, 1, None)
    approval = await sync_to_async(deciding.decide)(call.pk, operators[0], True)
    # The client's cancellation gets there between the approval and the forwarding.
    await sync_to_async(ending.cancel_running)(call.pk, "the client cancelled", Actor.client(client_token))
    approval.row.tool = tool
    try:
        # The upstream request it starts is cancelled mid-start; that ends at once (see transport_stdio.start).
        async with asyncio.timeout(30):
            result = await runner.forward(approval.row, lambda message: None)
    finally:
        await upstream_sessions.session_pool().close_all()
    assert result["isError"] is True
    assert "cancelled: the client cancelled" in result["content"][0]["text"]
    call = await Call.objects.aget()
    assert call.status == Call.Status.CANCELLED and call.forwarded_at is None and call.result is None
    assert not await AuditEvent.objects.filter(
        call_id=call.pk, action__in=["call.forwarded", "call.completed"]
    ).aexists()


async def test_it_tells_the_client_when_the_upstream_server_is_down(demo_server, run):
    await sync_to_async(servers.update_server)(demo_server, command="/nonexistent/demo-server")
    result = await run("demo_lookup_customer", {"customer_id": "C007"})
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert "The upstream server Demo failed to run demo_lookup_customer" in text
    call = await Call.objects.aget()
    assert call.status == Call.Status.FAILED and call.error
