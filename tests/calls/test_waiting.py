"""The gateway's side of a call: waiting for a decision and what the client is told."""

import asyncio
import time

import pytest
from asgiref.sync import sync_to_async

from approvals.calls import deciding, runner
from approvals.calls.models import Call
from approvals.protocol import revisions
from approvals.tokens.context import ClientContext
from tests.fixtures.calls import wait_for_pending_call
from tests.fixtures.waiting import eventually

pytestmark = pytest.mark.django_db(transaction=True)


def context(token):
    return ClientContext(token, revisions.MODERN, "2026-07-28")


def refund_params(**meta):
    return {"name": "shop_issue_refund", "arguments": {"order_id": 7, "amount": 20}, "_meta": meta}


async def test_it_wakes_the_waiting_request_through_the_channel_layer(client_token, refund_tool, operators, settings):
    settings.CALL_REREAD_SECONDS = 30  # far longer than the test: only the channel message can wake it
    sent = []

    async def emit(message):
        sent.append(message)

    waiting = asyncio.create_task(runner.run_call(context(client_token), 1, refund_params(progressToken="p1"), emit))
    call_id = (await wait_for_pending_call()).pk
    # The waiting side has subscribed once it has told the client it waits.
    await eventually(lambda: sent, message="the waiting side telling the client it waits")
    started = time.monotonic()
    await sync_to_async(deciding.decide)(call_id, operators[0], False, "not today")
    result = await asyncio.wait_for(waiting, 5)
    assert time.monotonic() - started < 10
    assert result["isError"] is True
    assert "denied by operator ann: not today" in result["content"][0]["text"]
    assert sent and sent[0]["method"] == "notifications/progress"
    assert sent[0]["params"]["progressToken"] == "p1"
    assert sent[0]["params"]["message"] == "waiting for operator approval"


async def test_it_expires_a_call_nobody_decides(client_token, refund_tool, settings):
    settings.APPROVAL_TIMEOUT_SECONDS = 0.3
    settings.CALL_REREAD_SECONDS = 0.1

    async def emit(message):
        pass

    result = await asyncio.wait_for(runner.run_call(context(client_token), 1, refund_params(), emit), 5)
    assert result["isError"] is True
    assert "was not run: no operator decided within" in result["content"][0]["text"]
    call = await Call.objects.aget()
    assert call.status == Call.Status.EXPIRED


async def test_it_cancels_the_call_when_the_client_goes_away(client_token, refund_tool):
    async def emit(message):
        pass

    waiting = asyncio.create_task(runner.run_call(context(client_token), 1, refund_params(), emit))
    call_id = (await wait_for_pending_call()).pk
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    # A cancellation that reaches the request before it has seen its call recorded ends the request at once,
    # leaving the loop to cancel the call once the write is done (runner.record_arrival).
    cancelled = Call.objects.filter(pk=call_id, status=Call.Status.CANCELLED)
    call = await eventually(cancelled.afirst, timeout=5, message="the call cancelled")
    assert call.reason == "the client closed the request"


async def test_it_answers_an_unknown_tool_in_protocol_terms(client_token, refund_tool):
    async def emit(message):
        pass

    with pytest.raises(calls_error()) as excinfo:
        await runner.run_call(context(client_token), 1, {"name": "shop_nope", "arguments": {}}, emit)
    assert excinfo.value.code == -32602


def calls_error():
    from approvals.protocol.jsonrpc import JsonRpcError

    return JsonRpcError
