"""The calls a process holds: one lease renewal and one re-read per interval for all, and what a lapsed lease ends."""

import asyncio
from datetime import timedelta

import pytest
from asgiref.sync import sync_to_async
from django.db import connection
from django.utils import timezone

from approvals.audit.models import AuditEvent
from approvals.calls import deciding, ending, expiry, holding, lifecycle, runner
from approvals.calls.models import Call
from approvals.protocol import revisions
from approvals.tokens.context import ClientContext
from tests.fixtures.calls import pending_call
from tests.fixtures.waiting import eventually

pytestmark = pytest.mark.django_db(transaction=True)

HELD = 20


def context(token):
    return ClientContext(token, revisions.MODERN, "2026-07-28")


async def nowhere(message):
    pass


def counting(monkeypatch, module, name):
    seen = []
    original = getattr(module, name)

    def wrapper(*args):
        seen.append(args)
        return original(*args)

    async def async_wrapper(*args):
        seen.append(args)
        return await original(*args)

    monkeypatch.setattr(module, name, async_wrapper if asyncio.iscoroutinefunction(original) else wrapper)
    return seen


def actions(call):
    return list(AuditEvent.objects.filter(call_id=call.pk).order_by("seq").values_list("action", flat=True))


def lapse(call):
    Call.objects.filter(pk=call.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))


async def test_it_re_reads_every_call_a_process_holds_in_one_query_per_interval(
    client_token, refund_tool, settings, monkeypatch
):
    settings.CALL_REREAD_SECONDS = 0.05
    renewals = counting(monkeypatch, holding, "renew")
    looks = counting(monkeypatch, runner, "status_of")
    params = {"name": "shop_issue_refund", "arguments": {"order_id": 7, "amount": 20}}
    waiting = [asyncio.create_task(runner.run_call(context(client_token), n, params, nowhere)) for n in range(HELD)]
    await eventually(lambda: any(len(asked) == HELD for _, asked in renewals), message="a renewal naming every call")
    mine = set(await sync_to_async(list)(Call.objects.values_list("pk", flat=True)))

    def ours():
        # A worker's in-thread console, started by an earlier test, may meanwhile renew the calls that test held.
        return [held for held, _ in renewals if set(held) & mine]

    intervals = len(ours())
    await eventually(lambda: len(ours()) >= intervals + 3, message="three more intervals")
    # Decided behind the console's back: no live event, so only the batched re-read can notice.
    await Call.objects.aupdate(status=Call.Status.DENIED, decided_by_name="ann", reason="no")
    before_the_decision = len(ours())

    results = await asyncio.wait_for(asyncio.gather(*waiting), 10)

    assert all("denied by operator ann: no" in result["content"][0]["text"] for result in results)
    # Each call read its own status when it began to wait and once when woken, never on a timer of its own.
    assert len(looks) == 2 * HELD
    assert all(len(held) == HELD for held in ours()[intervals - 1 : before_the_decision])


async def test_it_renews_the_lease_of_a_call_while_it_is_held(client_token, refund_tool, settings):
    settings.CALL_REREAD_SECONDS, settings.CALL_LEASE_SECONDS = 0.05, 1
    params = {"name": "shop_issue_refund", "arguments": {"order_id": 7, "amount": 20}}
    waiting = asyncio.create_task(runner.run_call(context(client_token), 1, params, nowhere))
    first = await eventually(Call.objects.filter(status=Call.Status.PENDING).afirst, message="a held call")
    assert first.holder == lifecycle.holding_process()

    async def renewed():
        return (await Call.objects.aget(pk=first.pk)).lease_expires_at > first.lease_expires_at

    await eventually(renewed, message="the lease renewed")
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting


def test_it_ends_a_pending_call_whose_process_stopped_renewing_its_lease_as_abandoned(client_token, refund_tool):
    abandoned, held = pending_call(client_token, refund_tool), pending_call(client_token, refund_tool)
    lapse(abandoned)

    assert expiry.expire_stale_calls() == 1

    abandoned.refresh_from_db()
    held.refresh_from_db()
    assert abandoned.status == Call.Status.CANCELLED
    assert abandoned.reason == "abandoned: the client's connection closed"
    assert actions(abandoned)[-1] == "call.cancelled"
    assert held.status == Call.Status.PENDING


def test_it_refuses_a_decision_on_an_abandoned_call(client_token, refund_tool, operators):
    call = pending_call(client_token, refund_tool)
    lapse(call)
    ending.end_abandoned_calls()

    decision = deciding.decide(call.pk, operators[0], True)

    assert not decision.won
    assert decision.message.startswith("Already cancelled") and ending.ABANDONED in decision.message
    assert "call.approved" not in actions(call)


def test_it_fails_an_approved_call_whose_process_died_before_forwarding_it(client_token, refund_tool, operators):
    call = pending_call(client_token, refund_tool)
    assert deciding.decide(call.pk, operators[0], True).won
    lapse(call)

    assert ending.end_abandoned_calls() == 1

    call.refresh_from_db()
    assert call.status == Call.Status.FAILED
    assert call.error == ending.NEVER_FORWARDED
    assert actions(call)[-1] == "call.failed"


def test_it_fails_a_forwarded_call_whose_process_died_saying_it_may_have_run(client_token, refund_tool, operators):
    call = pending_call(client_token, refund_tool)
    deciding.decide(call.pk, operators[0], True)
    call.refresh_from_db()
    assert ending.mark_forwarded(call)
    lapse(call)

    assert ending.end_abandoned_calls() == 1

    call.refresh_from_db()
    assert call.status == Call.Status.FAILED and "it may have run" in call.error
    event = AuditEvent.objects.get(call_id=call.pk, action="call.failed")
    assert event.data == {"error": ending.STOPPED_UPSTREAM}


async def test_it_wakes_a_held_call_ended_by_the_sweep_and_answers_it(client_token, refund_tool, settings):
    settings.CALL_REREAD_SECONDS = 30  # the sweep's own live event must wake it
    params = {"name": "shop_issue_refund", "arguments": {"order_id": 7, "amount": 20}}
    waiting = asyncio.create_task(runner.run_call(context(client_token), 1, params, nowhere))
    call = await eventually(Call.objects.filter(status=Call.Status.PENDING).afirst, message="a held call")
    await sync_to_async(lapse)(call)

    assert await sync_to_async(ending.end_abandoned_calls)() == 1

    result = await asyncio.wait_for(waiting, 5)
    assert "cancelled: abandoned: the client's connection closed" in result["content"][0]["text"]


async def test_it_renews_a_lease_only_once_half_of_it_is_left(client_token, refund_tool, settings, monkeypatch):
    settings.CALL_REREAD_SECONDS, settings.CALL_LEASE_SECONDS = 0.05, 60
    renewals = counting(monkeypatch, holding, "renew")
    params = {"name": "shop_issue_refund", "arguments": {"order_id": 7, "amount": 20}}
    waiting = asyncio.create_task(runner.run_call(context(client_token), 1, params, nowhere))
    first = await eventually(Call.objects.filter(status=Call.Status.PENDING).afirst, message="a held call")

    await eventually(lambda: len(renewals) >= 5, message="five re-reads")

    assert (await Call.objects.aget(pk=first.pk)).lease_expires_at == first.lease_expires_at
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting


def test_it_finds_held_calls_by_their_ids_with_one_parameter_for_all_of_them_on_postgresql(client_token, refund_tool):
    calls = [pending_call(client_token, refund_tool) for _ in range(5)]
    ids = [call.pk for call in calls[:3]] + [10**9]

    found = Call.objects.filter(id__any_of=ids)

    assert sorted(found.values_list("pk", flat=True)) == sorted(ids[:3])
    _, params = found.query.sql_with_params()
    assert len(params) == (1 if connection.vendor == "postgresql" else len(ids))
