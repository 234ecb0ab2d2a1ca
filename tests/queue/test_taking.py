"""Taking a pending call, giving it back, and the escalation of a call its rule wants flagged before it expires."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from approvals import roles
from approvals.audit.models import AuditEvent
from approvals.calls import expiry, taking
from approvals.calls.models import Call
from approvals.policy import rules
from approvals.webhooks.models import WebhookDelivery, WebhookEndpoint


def actions_of(call):
    return list(AuditEvent.objects.filter(call_id=call.pk).values_list("action", "actor_name"))


def test_it_lets_one_operator_take_a_call_and_tells_the_next_who_has_it(person, refund_call):
    ann, ann_client = person("ann", roles.OPERATOR)
    bob, _ = person("bob", roles.OPERATOR)

    response = ann_client.post(reverse("call_claim", args=[refund_call.pk]), HTTP_ACCEPT="application/json")
    assert response.json() == {
        "call_id": refund_call.pk,
        "status": "pending",
        "message": "You are on it.",
        "level": "success",
    }
    taken = taking.claim_call(refund_call.pk, bob)

    assert not taken.won and taken.message == "ann is on it already."
    refund_call.refresh_from_db()
    assert (refund_call.claimed_by, refund_call.claimed_by_name) == (ann, "ann") and refund_call.claimed_at
    assert ("call.claimed", "ann") in actions_of(refund_call)
    queue = ann_client.get(reverse("queue")).content.decode()
    assert "data-claimed-by>ann</span>" in queue and "Take it" not in queue and "Release" in queue


def test_it_lets_only_the_taker_or_an_admin_release_a_call(person, refund_call):
    ann, _ = person("ann", roles.OPERATOR)
    bob, _ = person("bob", roles.OPERATOR)
    ada, _ = person("ada", roles.ADMIN)
    taking.claim_call(refund_call.pk, ann)

    refused = taking.release_claim(refund_call.pk, bob)
    released = taking.release_claim(refund_call.pk, ada)

    assert not refused.won and refused.message == "Only ann or an admin may release it."
    assert released.won and released.message == "Released from ann."
    refund_call.refresh_from_db()
    assert refund_call.claimed_by is None and refund_call.claimed_by_name == "" and refund_call.claimed_at is None
    assert ("call.released", "ada") in actions_of(refund_call)
    assert taking.claim_call(refund_call.pk, bob).won


def test_it_takes_no_call_that_was_decided(person, refund_call):
    ann, _ = person("ann", roles.OPERATOR)
    Call.objects.filter(pk=refund_call.pk).update(status=Call.Status.DENIED)

    taken = taking.claim_call(refund_call.pk, ann)

    assert not taken.won and taken.message == "The call no longer waits for a decision."
    with pytest.raises(Call.DoesNotExist):
        taking.claim_call(10**9, ann)


def escalating_rule(seconds):
    return rules.create_rule(
        rules.RuleRequest("ask", tool_glob="shop_*", approval_timeout_seconds=600, escalate_before_seconds=seconds)
    )


def test_it_escalates_a_call_near_its_expiry_once_and_tells_the_webhooks(make_call, refund_tool):
    escalating_rule(120)
    WebhookEndpoint.objects.create(
        url="https://hooks.example/",
        events=["call.escalated"],
        console_url="https://console.example/",
        secret="whsec_x",
    )
    call = make_call(refund_tool, {"order_id": 1012, "amount": 40})
    assert call.escalates_at == call.expires_at - timedelta(seconds=120)
    assert expiry.escalate_due_calls() == 0

    Call.objects.filter(pk=call.pk).update(escalates_at=timezone.now())
    assert expiry.escalate_due_calls() == 1
    assert expiry.escalate_due_calls() == 0

    call.refresh_from_db()
    assert call.escalated_at is not None and ("call.escalated", "system") in actions_of(call)
    delivery = WebhookDelivery.objects.get(event_type="call.escalated")
    assert delivery.payload["data"]["call"]["id"] == call.pk
    assert delivery.payload["data"]["call"]["expires_at"] == call.expires_at.isoformat()
    assert delivery.payload["data"]["url"] == f"https://console.example/calls/{call.pk}/"


def test_it_never_escalates_a_call_whose_rule_names_no_time(make_call, refund_tool):
    escalating_rule(None)
    call = make_call(refund_tool, {"order_id": 1012, "amount": 40})

    assert call.escalates_at is None
    Call.objects.filter(pk=call.pk).update(expires_at=timezone.now() + timedelta(seconds=1))
    assert expiry.escalate_due_calls() == 0


def test_it_refuses_an_escalation_time_out_of_bounds(db):
    with pytest.raises(rules.RuleError, match="the escalation must be a whole number of seconds"):
        escalating_rule(0)


def test_it_flags_an_escalated_call_in_the_queue(person, make_call, refund_tool):
    escalating_rule(600)
    _, client = person("ann", roles.OPERATOR)
    call = make_call(refund_tool, {"order_id": 1012, "amount": 40})

    expiry.escalate_due_calls()

    call.refresh_from_db()
    page = client.get(reverse("queue")).content.decode()
    assert call.escalated_at is not None and "data-escalated>escalated<" in page and "data-escalation" in page
