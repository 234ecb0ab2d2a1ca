import threading

import pytest
from django.db import connection

from approvals.audit import values
from approvals.audit.models import AuditEvent
from approvals.calls import deciding, ending, expiry, lifecycle
from approvals.calls.models import Call
from approvals.protocol import canonical, revisions, schemas
from approvals.tokens.context import ClientContext
from tests.fixtures.calls import pending_call


def actions(call):
    return list(AuditEvent.objects.filter(call_id=call.pk).order_by("seq").values_list("action", flat=True))


def test_it_holds_a_call_no_rule_decides(client_token, refund_tool):
    call = pending_call(client_token, refund_tool)
    assert call.rule_name == "no rule matched: ask by default"
    assert call.expires_at > call.received_at
    assert actions(call) == ["call.received", "call.policy", "call.pending"]


def test_it_rejects_invalid_arguments_with_a_message_the_model_can_act_on(client_token, refund_tool):
    ctx = ClientContext(client_token, revisions.MODERN, "2026-07-28")
    call, answer = lifecycle.receive_call(ctx, refund_tool, {"order_id": "seven", "amount": 20}, 1, None)
    assert call.status == Call.Status.REJECTED
    assert answer["isError"] is True
    text = answer["content"][0]["text"]
    assert "order_id" in text and "integer" in text and "call again" in text


def test_it_lets_exactly_one_of_two_decisions_win(client_token, refund_tool, operators):
    call = pending_call(client_token, refund_tool)
    ann, bob = operators
    first = deciding.decide(call.pk, ann, True)
    second = deciding.decide(call.pk, bob, False, "too much")
    assert first.won and not second.won
    assert second.message == "Already approved by ann."
    call.refresh_from_db()
    assert call.status == Call.Status.APPROVED and call.decided_by == ann
    assert actions(call)[-1] == "call.approved"


def test_it_refuses_edited_arguments_that_fail_validation(client_token, refund_tool, operators):
    call = pending_call(client_token, refund_tool)
    decision = deciding.decide(call.pk, operators[0], True, edited_arguments={"order_id": 7, "amount": 9000})
    assert not decision.won
    assert any("9000" in e and "maximum" in e for e in decision.errors)
    call.refresh_from_db()
    assert call.status == Call.Status.PENDING


def test_it_records_both_versions_of_edited_arguments(client_token, refund_tool, operators):
    call = pending_call(client_token, refund_tool)
    assert deciding.decide(call.pk, operators[0], True, edited_arguments={"order_id": 7, "amount": 5}).won
    call.refresh_from_db()
    assert call.final_arguments == {"order_id": 7, "amount": 5}
    edited = AuditEvent.objects.get(call_id=call.pk, action="call.edited")
    assert (edited.data["before"], edited.data["after"]) == (
        {"order_id": 7, "amount": 20},
        {"order_id": 7, "amount": 5},
    )


def test_it_binds_an_approval_to_what_the_operator_saw(client_token, refund_tool, operators):
    call = pending_call(client_token, refund_tool)
    stale = lifecycle.binding_digest(call.arguments_digest, "an older definition")
    decision = deciding.decide(call.pk, operators[0], True, shown_binding=stale)
    assert not decision.won and "changed since it was shown" in decision.message
    assert deciding.decide(call.pk, operators[0], True, shown_binding=lifecycle.call_binding(call)).won


def test_it_does_not_expire_a_call_that_was_decided(client_token, refund_tool, operators):
    call = pending_call(client_token, refund_tool)
    deciding.decide(call.pk, operators[0], False, "no")
    assert not ending.end_pending(call.pk, Call.Status.EXPIRED, "late")
    call.refresh_from_db()
    assert call.status == Call.Status.DENIED and call.reason == "no"


def test_it_expires_stale_calls_left_behind_by_a_dead_process(client_token, refund_tool, settings):
    settings.APPROVAL_TIMEOUT_SECONDS = 0
    call = pending_call(client_token, refund_tool)
    assert expiry.expire_stale_calls() == 1
    call.refresh_from_db()
    assert call.status == Call.Status.EXPIRED
    assert actions(call)[-1] == "call.expired"


def test_it_cancels_a_call_by_the_clients_request_id(client_token, refund_tool):
    ctx = ClientContext(client_token, revisions.LEGACY, "2025-06-18", session_id="s1")
    call, _ = lifecycle.receive_call(ctx, refund_tool, {"order_id": 7, "amount": 20}, 42, None)
    assert not ending.cancel_by_request(client_token, "s1", "42", "stop")
    assert ending.cancel_by_request(client_token, "s1", 42, "stop")
    call.refresh_from_db()
    assert call.status == Call.Status.CANCELLED and call.reason == "stop"


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_it_lets_exactly_one_decision_win_under_a_real_race(client_token, refund_tool, operators):
    ann, bob = operators

    def decide(call, barrier, outcomes, user, approve):
        try:
            barrier.wait()
            outcomes.append(deciding.decide(call.pk, user, approve, "race"))
        finally:
            connection.close()

    for _ in range(50):
        call = pending_call(client_token, refund_tool)
        barrier = threading.Barrier(2)
        outcomes = []
        threads = [
            threading.Thread(target=decide, args=(call, barrier, outcomes, ann, True)),
            threading.Thread(target=decide, args=(call, barrier, outcomes, bob, False)),
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(o.won for o in outcomes) == [False, True]
        winner = next(o for o in outcomes if o.won)
        call.refresh_from_db()
        assert call.status == (Call.Status.APPROVED if winner.row.decided_by == ann else Call.Status.DENIED)
        assert AuditEvent.objects.filter(call_id=call.pk, action__in=["call.approved", "call.denied"]).count() == 1


def test_it_fails_an_approved_call_whose_process_stopped_before_answering(
    client_token, refund_tool, operators, settings
):
    call = pending_call(client_token, refund_tool)
    deciding.decide(call.pk, operators[0], True)
    assert expiry.expire_stale_calls() == 0, "a call just approved is still being run"
    settings.UPSTREAM_CALL_TIMEOUT_SECONDS = -120
    assert expiry.expire_stale_calls() == 1
    call.refresh_from_db()
    assert call.status == Call.Status.FAILED and "stopped before it was answered" in call.error
    assert actions(call)[-1] == "call.failed"


def test_it_encodes_a_calls_arguments_once_for_its_digest_size_check_and_audit(client_token, refund_tool, monkeypatch):
    arguments = {"order_id": 7, "amount": 20}
    encodings, encode = [], canonical.canonical_json

    def counted(value):
        encodings.append(value is arguments)
        return encode(value)

    for module in (canonical, lifecycle, schemas, values):
        monkeypatch.setattr(module, "canonical_json", counted)
    call, _ = lifecycle.receive_call(
        ClientContext(client_token, revisions.MODERN, "2026-07-28"), refund_tool, arguments, 1, None
    )

    assert encodings.count(True) == 1
    received = AuditEvent.objects.get(call_id=call.pk, action="call.received")
    assert call.arguments_digest == received.data["arguments_digest"] == canonical.sha256_digest(arguments)
    assert received.data["arguments"] == arguments and received.data["arguments_bytes"] == len(encode(arguments))
