"""A token past its expiry ends what its calls wait for, as a revocation does, on the housekeeping schedule."""

import asyncio
from datetime import timedelta

import pytest
from asgiref.sync import sync_to_async
from django.utils import timezone

from approvals import tasks
from approvals.audit.models import AuditEvent
from approvals.calls import deciding, ending, lifecycle, runner
from approvals.calls.models import Call
from approvals.protocol import revisions
from approvals.tokens.context import ClientContext
from approvals.tokens.credentials import create_token
from approvals.tokens.models import ClientToken
from tests.fixtures.waiting import eventually


def context(token):
    return ClientContext(token, revisions.MODERN, "2026-07-28")


def pending_call(token, tool):
    call, answer = lifecycle.receive_call(context(token), tool, {"order_id": 7, "amount": 20}, 1, None)
    assert answer is None and call.status == Call.Status.PENDING
    return call


def expire(token):
    ClientToken.objects.filter(pk=token.pk).update(expires_at=timezone.now() - timedelta(seconds=1))


def test_it_cancels_the_pending_and_the_approved_calls_of_an_expired_token_only(client_token, refund_tool, operator):
    waiting, approved = pending_call(client_token, refund_tool), pending_call(client_token, refund_tool)
    deciding.decide(approved.pk, operator, True)
    other = pending_call(create_token("other")[0], refund_tool)
    expire(client_token)

    tasks.expire_stale_calls()

    statuses = dict(Call.objects.values_list("pk", "status"))
    assert statuses == {waiting.pk: "cancelled", approved.pk: "cancelled", other.pk: "pending"}
    assert Call.objects.get(pk=waiting.pk).reason.startswith("the client token expired at ")
    assert not ending.mark_forwarded(approved)
    cancellations = AuditEvent.objects.filter(action="call.cancelled", actor_type="system")
    assert sorted(cancellations.values_list("call_id", flat=True)) == sorted([waiting.pk, approved.pk])


def test_it_leaves_the_calls_of_a_token_not_yet_expired(client_token, refund_tool):
    call = pending_call(client_token, refund_tool)
    ClientToken.objects.filter(pk=client_token.pk).update(expires_at=timezone.now() + timedelta(hours=1))

    tasks.expire_stale_calls()

    assert Call.objects.get(pk=call.pk).status == Call.Status.PENDING


@pytest.mark.django_db(transaction=True)
async def test_it_tells_the_waiting_client_that_its_token_expired(client_token, refund_tool):
    params = {"name": "shop_issue_refund", "arguments": {"order_id": 7, "amount": 20}}
    waiting = asyncio.create_task(runner.run_call(context(client_token), 1, params, lambda message: None))
    await eventually(Call.objects.filter(status=Call.Status.PENDING).aexists, message="a waiting call")
    await sync_to_async(expire)(client_token)

    await sync_to_async(tasks.expire_stale_calls)()
    result = await asyncio.wait_for(waiting, 10)

    assert result["isError"]
    assert "was cancelled: the client token expired at " in result["content"][0]["text"]
