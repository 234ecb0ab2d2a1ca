"""Revoking a token ends what its calls wait for, and the cap on its pending calls holds under races."""

import threading

import pytest
from django.db import connection

from approvals.actions.revocation import revoke_token
from approvals.audit.models import AuditEvent
from approvals.calls import deciding, ending, lifecycle
from approvals.calls.models import Call
from approvals.inputs import requests
from approvals.inputs.models import InputRequest
from approvals.protocol import revisions
from approvals.tokens.context import ClientContext
from approvals.tokens.credentials import create_token
from approvals.tokens.models import ClientToken

ELICIT = {"mode": "form", "message": "Which account?", "requestedSchema": {"type": "object", "properties": {}}}


def receive(token, tool):
    ctx = ClientContext(token, revisions.MODERN, "2026-07-28")
    return lifecycle.receive_call(ctx, tool, {"order_id": 7, "amount": 20}, 1, None)


def pending_call(token, tool):
    call, answer = receive(token, tool)
    assert answer is None and call.status == Call.Status.PENDING
    return call


def test_it_cancels_the_pending_and_the_approved_calls_of_a_revoked_token_only(client_token, refund_tool, operator):
    waiting, approved = pending_call(client_token, refund_tool), pending_call(client_token, refund_tool)
    deciding.decide(approved.pk, operator, True)
    other = pending_call(create_token("other")[0], refund_tool)

    assert revoke_token(client_token)

    statuses = dict(Call.objects.values_list("pk", "status"))
    assert statuses == {waiting.pk: "cancelled", approved.pk: "cancelled", other.pk: "pending"}
    assert not ending.mark_forwarded(approved)
    assert AuditEvent.objects.filter(action="call.cancelled", actor_type="system").count() == 2


def test_it_cancels_what_a_forwarded_call_of_a_revoked_token_waits_for_but_lets_its_answer_come(
    client_token, refund_tool
):
    call, _ = receive(client_token, refund_tool)
    Call.objects.filter(pk=call.pk).update(status=Call.Status.FORWARDED)
    request = requests.open_request(call, "elicitation/create", ELICIT, InputRequest.Route.OPERATOR)

    revoke_token(client_token)

    request.refresh_from_db()
    assert request.status == InputRequest.Status.CANCELLED and request.reason == "the client token was revoked"
    assert Call.objects.get(pk=call.pk).status == Call.Status.FORWARDED


def test_it_records_the_revocation_with_the_token_before_and_after(client_token):
    revoke_token(client_token)

    event = AuditEvent.objects.get(action="token.revoked")
    assert event.data["before"]["revoked_at"] is None and event.data["after"]["revoked_at"] is not None
    assert event.data["after"]["name"] == "agent"


def test_it_refuses_a_call_that_would_wait_past_the_cap_without_recording_it(client_token, refund_tool):
    ClientToken.objects.filter(pk=client_token.pk).update(max_pending_calls=2)
    for _ in range(2):
        pending_call(client_token, refund_tool)

    call, answer = receive(client_token, refund_tool)

    assert call is None and answer["isError"]
    assert (
        "at most 2 calls waiting" in answer["content"][0]["text"]
        and "2 are waiting now" in answer["content"][0]["text"]
    )
    assert Call.objects.count() == 2


def race(work, times: int):
    """Runs `work(i)` for each i in threads released together; what each returned. Any error fails the test."""
    barrier, outcomes, errors = threading.Barrier(times), [None] * times, []

    def run(i):
        try:
            barrier.wait()
            outcomes[i] = work(i)
        except Exception as exc:
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(times)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    return outcomes


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_it_lets_no_approval_racing_a_revocation_run_its_call(refund_tool, operator):
    for attempt in range(20):
        token, _ = create_token(f"agent {attempt}")
        call = pending_call(token, refund_tool)

        race(
            lambda i, call=call, token=token: deciding.decide(call.pk, operator, True) if i else revoke_token(token), 2
        )

        call.refresh_from_db()
        assert call.status == Call.Status.CANCELLED
        assert not ending.mark_forwarded(call)
        assert not AuditEvent.objects.filter(call_id=call.pk, action="call.forwarded").exists()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_it_holds_the_pending_cap_against_calls_arriving_together(refund_tool):
    token, _ = create_token("agent", max_pending_calls=3)

    outcomes = race(lambda i: receive(token, refund_tool)[1], 8)

    assert sum(answer is None for answer in outcomes) == 3
    assert Call.objects.filter(status=Call.Status.PENDING).count() == 3
