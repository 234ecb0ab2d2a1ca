"""Rules that need several approvals, their own timeout, or someone other than the token's owner."""

import asyncio
import threading

import pytest
from asgiref.sync import sync_to_async
from django.core.management import CommandError
from django.db import connection
from django.urls import reverse

from approvals.audit.models import AuditEvent
from approvals.calls import deciding, expiry, lifecycle, runner
from approvals.calls.models import Call, CallApproval
from approvals.policy import rules
from approvals.policy.models import PolicyRule
from approvals.protocol import revisions
from approvals.tokens.context import ClientContext
from tests.commands.conftest import run
from tests.fixtures.calls import wait_for_pending_call
from tests.fixtures.gateway import sdk_client
from tests.fixtures.people import make_user

ARGUMENTS = {"order_id": 7, "amount": 20}


def ask_rule(**hold):
    return rules.create_rule(rules.RuleRequest("ask", tool_glob="*", name="two people", **hold))


def held_call(token, tool, arguments=ARGUMENTS):
    ctx = ClientContext(token, revisions.MODERN, "2026-07-28")
    call, answer = lifecycle.receive_call(ctx, tool, arguments, 1, None)
    assert answer is None and call.status == Call.Status.PENDING
    return call


def actions(call):
    return list(AuditEvent.objects.filter(call_id=call.pk).order_by("seq").values_list("action", flat=True))


@pytest.fixture
def quorum_call(client_token, refund_tool):
    ask_rule(approvals_needed=2)
    return held_call(client_token, refund_tool)


def test_it_keeps_a_call_pending_after_the_first_of_two_approvals(quorum_call, operators):
    ann, _ = operators
    outcome = deciding.decide(quorum_call.pk, ann, True)
    assert outcome.won and "1 of 2 approvals: ann" in outcome.message
    quorum_call.refresh_from_db()
    assert quorum_call.status == Call.Status.PENDING and quorum_call.decided_by is None
    assert deciding.approvals_text(quorum_call) == "1 of 2 approvals: ann"
    assert actions(quorum_call)[-1] == "call.approval"
    event = AuditEvent.objects.get(call_id=quorum_call.pk, action="call.approval")
    assert event.actor_name == "ann" and event.data["approvals"] == ["ann"] and event.data["needed"] == 2


def test_it_approves_the_call_when_a_second_operator_approves(quorum_call, operators):
    ann, bob = operators
    deciding.decide(quorum_call.pk, ann, True)
    outcome = deciding.decide(quorum_call.pk, bob, True)
    assert outcome.won and outcome.message == "Approved."
    quorum_call.refresh_from_db()
    assert quorum_call.status == Call.Status.APPROVED and quorum_call.decided_by == bob
    assert actions(quorum_call)[-2:] == ["call.approval", "call.approved"]
    assert AuditEvent.objects.get(call_id=quorum_call.pk, action="call.approved").data["approvals"] == ["ann", "bob"]


def test_it_does_not_count_the_same_operator_twice(quorum_call, operators):
    ann, _ = operators
    deciding.decide(quorum_call.pk, ann, True)
    again = deciding.decide(quorum_call.pk, ann, True)
    assert not again.won
    assert again.message == "You approved already: 1 of 2 approvals: ann."
    quorum_call.refresh_from_db()
    assert quorum_call.status == Call.Status.PENDING
    assert CallApproval.objects.filter(call=quorum_call).count() == 1


def test_it_ends_the_call_on_a_single_denial_after_an_approval(quorum_call, operators):
    ann, bob = operators
    deciding.decide(quorum_call.pk, ann, True)
    denial = deciding.decide(quorum_call.pk, bob, False, "not this order")
    assert denial.won
    quorum_call.refresh_from_db()
    assert quorum_call.status == Call.Status.DENIED and quorum_call.reason == "not this order"
    late = deciding.decide(quorum_call.pk, make_user("cid", "operator"), True)
    assert not late.won and late.message == "Already denied by bob: not this order."


def test_it_voids_earlier_approvals_when_an_operator_edits_the_arguments(quorum_call, operators):
    ann, bob = operators
    shown = lifecycle.call_binding(quorum_call)
    deciding.decide(quorum_call.pk, ann, True, shown_binding=shown)
    edited = deciding.decide(quorum_call.pk, bob, True, edited_arguments={"order_id": 7, "amount": 5})
    assert edited.won and "1 of 2 approvals: bob" in edited.message
    quorum_call.refresh_from_db()
    assert quorum_call.status == Call.Status.PENDING
    assert quorum_call.final_arguments == {"order_id": 7, "amount": 5}
    assert deciding.approvers(quorum_call) == ["bob"], "ann approved other arguments"

    stale = deciding.decide(quorum_call.pk, make_user("cid", "operator"), True, shown_binding=shown)
    assert not stale.won and "changed since it was shown" in stale.message

    outcome = deciding.decide(quorum_call.pk, ann, True, shown_binding=lifecycle.call_binding(quorum_call))
    assert outcome.won
    quorum_call.refresh_from_db()
    assert quorum_call.status == Call.Status.APPROVED
    assert quorum_call.edited_arguments == {"order_id": 7, "amount": 5}
    assert actions(quorum_call)[-4:] == ["call.approval", "call.edited", "call.approval", "call.approved"]


def test_it_takes_the_approvals_needed_from_the_rule_as_the_call_was_held(client_token, refund_tool, operators):
    rule = ask_rule(approvals_needed=2)
    call = held_call(client_token, refund_tool)
    PolicyRule.objects.filter(pk=rule.pk).update(approvals_needed=1)
    deciding.decide(call.pk, operators[0], True)
    call.refresh_from_db()
    assert call.status == Call.Status.PENDING and call.approvals_needed == 2


def test_it_gives_a_held_call_the_timeout_of_the_rule_that_asked(client_token, refund_tool, settings):
    settings.APPROVAL_TIMEOUT_SECONDS = 600
    ask_rule(approval_timeout_seconds=45)
    call = held_call(client_token, refund_tool)
    assert (call.expires_at - call.received_at).total_seconds() == 45
    assert expiry.expired_reason(call) == "no operator decided within 45 seconds"


def test_it_falls_back_to_the_global_timeout_for_a_rule_without_its_own(client_token, refund_tool, settings):
    settings.APPROVAL_TIMEOUT_SECONDS = 90
    ask_rule()
    call = held_call(client_token, refund_tool)
    assert (call.expires_at - call.received_at).total_seconds() == 90


@pytest.mark.django_db(transaction=True)
async def test_it_expires_a_call_at_its_rules_timeout_and_says_so(client_token, refund_tool, settings):
    settings.APPROVAL_TIMEOUT_SECONDS = 600
    settings.CALL_REREAD_SECONDS = 0.1
    await sync_to_async(ask_rule)(approval_timeout_seconds=2, approvals_needed=2)

    async def emit(message):
        pass

    ctx = ClientContext(client_token, revisions.MODERN, "2026-07-28")
    params = {"name": "shop_issue_refund", "arguments": ARGUMENTS}
    result = await asyncio.wait_for(runner.run_call(ctx, 1, params, emit), 10)
    assert result["isError"] is True
    assert "fewer than 2 operators approved within 2 seconds" in result["content"][0]["text"]
    assert (await Call.objects.aget()).status == Call.Status.EXPIRED


def text_of(result) -> str:
    return " ".join(block.text for block in result.content if block.type == "text")


async def test_it_keeps_the_sdk_client_waiting_until_the_second_operator_approves(
    mcp_url, secret, demo_server, operators
):
    await sync_to_async(ask_rule)(approvals_needed=2)
    ann, bob = operators
    async with sdk_client(mcp_url, secret) as client:
        answer = asyncio.create_task(client.call_tool("demo_lookup_customer", {"customer_id": "C007"}))
        call = await wait_for_pending_call()
        first = await sync_to_async(deciding.decide)(call.pk, ann, True)
        again = await sync_to_async(deciding.decide)(call.pk, ann, True)
        # A real pause, not a wait: the client must stay unanswered while one approval is all there is.
        await asyncio.sleep(0.5)
        assert not answer.done()
        assert (await Call.objects.aget(pk=call.pk)).status == Call.Status.PENDING

        second = await sync_to_async(deciding.decide)(call.pk, bob, True)
        result = await asyncio.wait_for(answer, timeout=15)

    assert first.won and not again.won and second.won
    assert not result.is_error, text_of(result)
    assert "C007" in text_of(result)
    call = await Call.objects.aget(pk=call.pk)
    assert call.status == Call.Status.COMPLETED


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_it_counts_racing_approvals_one_by_one_on_postgresql(client_token, refund_tool):
    """Three operators approve a quorum-2 call at once, and one denies: exactly one of them ends it."""
    ask_rule(approvals_needed=2)
    people = [make_user(name, "operator") for name in ("ann", "bob", "cid", "dee")]

    def decide(call, barrier, outcomes, user, approve):
        try:
            barrier.wait()
            outcomes.append((user.username, deciding.decide(call.pk, user, approve, "race")))
        finally:
            connection.close()

    for _ in range(20):
        call = held_call(client_token, refund_tool)
        barrier = threading.Barrier(len(people))
        outcomes = []
        threads = [
            threading.Thread(target=decide, args=(call, barrier, outcomes, user, user.username != "dee"))
            for user in people
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        call.refresh_from_db()
        ended = AuditEvent.objects.filter(call_id=call.pk, action__in=["call.approved", "call.denied"])
        assert ended.count() == 1
        recorded = CallApproval.objects.filter(call=call).count()
        if call.status == Call.Status.APPROVED:
            assert recorded == 2, "the second approval ends it; later ones find it decided"
            assert len(deciding.approvers(call)) == 2
        else:
            assert call.status == Call.Status.DENIED and call.decided_by_name == "dee"
            assert recorded <= 1
        assert sum(1 for _, o in outcomes if o.won) == recorded + (call.status == Call.Status.DENIED)


def test_it_says_from_the_decide_command_that_the_call_waits_for_more(quorum_call, operators, monkeypatch):
    output = run("decide", str(quorum_call.pk), "approve", "--as", "ann")
    assert output.strip() == (
        f"Approval recorded: 1 of 2 approvals: ann; the call waits for more. (call {quorum_call.pk}, "
        "shop_issue_refund, as ann)"
    )
    with pytest.raises(CommandError, match="You approved already: 1 of 2 approvals: ann"):
        run("decide", str(quorum_call.pk), "approve", "--as", "ann")
    # bob at his own account on the host.
    monkeypatch.setattr("approvals.management.commands.decide.host_account", lambda: "bob")
    assert run("decide", str(quorum_call.pk), "approve", "--as", "bob").startswith("approved call")


def test_it_shows_an_edit_awaiting_approvals_on_the_queue_and_starts_the_next_edit_from_it(
    client_token, refund_tool, person
):
    ask_rule(approvals_needed=2)
    call = held_call(client_token, refund_tool)
    _, bob = person("bob", "operator")
    _, ann = person("ann", "operator")
    ann.post(reverse("call_decide", args=[call.pk]), {"decision": "approve", "binding": lifecycle.call_binding(call)})

    edit = bob.post(
        reverse("call_edit", args=[call.pk]),
        {"arg-order_id": "7", "arg-amount": "5", "binding": lifecycle.call_binding(call)},
        follow=True,
    )
    assert "Approval recorded: 1 of 2 approvals: bob; the call waits for more." in edit.content.decode()
    page = ann.get(reverse("queue")).content.decode()
    assert "1 of 2 approvals: bob" in page and "Edited by an operator" in page
    assert "You approved already" not in page, "ann approved the arguments before the edit"
    form = ann.get(reverse("call_edit", args=[call.pk])).context["editor"].form
    assert form["amount"].value() == 5
