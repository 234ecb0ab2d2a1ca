"""Events reach receivers the tests start, signed per Standard Webhooks, sent off the path of the call.

Each test runs embedded (this process's threads send) and, with PostgreSQL and Redis, with a celery worker.
"""

import asyncio
import re
import threading

import pytest
from django.test import Client
from django.utils.timezone import now

from approvals.audit.models import AuditEvent
from approvals.calls import deciding
from approvals.calls.models import Call
from approvals.webhooks import sending as sending_module
from approvals.webhooks.models import WebhookDelivery, WebhookEndpoint
from approvals.webhooks.sending import send_due
from console.celery import app
from tests.fixtures.calls import pending_call
from tests.fixtures.gateway import sdk_client
from tests.fixtures.people import make_user
from tests.fixtures.waiting import wait_until
from tests.observe.scraping import collected, value
from tests.webhooks.receiver import attempts_recorded, body_of

pytestmark = pytest.mark.django_db(transaction=True)


def test_it_signs_call_pending_and_then_call_decided_for_one_call(
    sending, receiver, endpoint, client_token, refund_tool
):
    hook = receiver()
    _, secret = endpoint(hook.url)
    call = pending_call(client_token, refund_tool)
    assert hook.verified(secret, 1)[0]["type"] == "call.pending"
    assert deciding.decide(call.pk, make_user("ann", superuser=True), False, "wrong order").won

    pending, decided = hook.verified(secret, 2)
    assert [pending["type"], decided["type"]] == ["call.pending", "call.decided"]
    assert pending["data"]["call"]["id"] == decided["data"]["call"]["id"] == call.pk
    assert pending["data"]["call"]["status"] == "pending"
    assert (
        decided["data"]["call"] | {"status": "denied", "decided_by": "ann", "reason": "wrong order"}
        == (decided["data"]["call"])
    )
    assert decided["data"]["url"] == f"http://console.test/calls/{call.pk}/"
    first, second = (headers["webhook-id"] for headers, _ in hook.received(2))
    assert first != second and first.startswith("msg_")


def test_it_carries_no_arguments_and_no_way_to_act_without_signing_in(
    sending, receiver, endpoint, client_token, refund_tool
):
    hook = receiver()
    endpoint(hook.url)
    call = pending_call(client_token, refund_tool, {"order_id": 4242, "amount": 98.75})
    text = hook.received(1)[0][1].decode()
    assert "4242" not in text and "98.75" not in text
    assert re.findall(r"https?://[^\"]+", text) == [f"http://console.test/calls/{call.pk}/"]
    assert set(body_of(hook.received(1)[0])["data"]["call"]) == {
        "id",
        "tool",
        "status",
        "client",
        "server",
        "decided_by",
        "reason",
        "received_at",
        "decided_at",
        "answered_at",
    }


def test_it_gets_the_event_to_a_receiver_that_failed_twice_on_the_third_try(
    sending, receiver, endpoint, client_token, refund_tool, admin_client
):
    hook = receiver(500, 503)
    added, secret = endpoint(hook.url, events=["call.pending"])
    pending_call(client_token, refund_tool)

    attempts = attempts_recorded(added, 3)
    assert [(a.number, a.status_code, bool(a.error)) for a in attempts] == [
        (1, 500, True),
        (2, 503, True),
        (3, 204, False),
    ]
    bodies = hook.verified(secret, 3)
    assert [b["type"] for b in bodies] == ["call.pending"] * 3
    assert len({headers["webhook-id"] for headers, _ in hook.received(3)}) == 1
    delivery = WebhookDelivery.objects.get(endpoint=added)
    assert delivery.state == "delivered"

    page = admin_client.get(f"/webhooks/{added.pk}/").content.decode()
    assert "#1" in page and "HTTP 500" in page and "#2" in page and "HTTP 503" in page
    assert "#3" in page and "HTTP 204" in page and "delivered" in page


def test_it_does_not_follow_a_redirect(sending, receiver, endpoint, client_token, refund_tool):
    elsewhere = receiver()
    hook = receiver((307, {"location": elsewhere.url}), *[(307, {"location": elsewhere.url})] * 10)
    added, _ = endpoint(hook.url, events=["call.pending"])
    pending_call(client_token, refund_tool)

    first = attempts_recorded(added, 1)[0]
    assert first.status_code == 307 and "redirect" in first.error
    assert elsewhere.requests == []


def test_it_answers_the_call_while_a_slow_receiver_still_hangs(
    sending, receiver, endpoint, live_console, demo_server, secret
):
    hook = receiver(hang=True)
    endpoint(hook.url, events=["call.pending", "call.decided", "call.finished"])
    answers = []

    def call():
        async def run():
            async with sdk_client(live_console + "/mcp", secret) as client:
                return await client.call_tool("demo_lookup_customer", {"customer_id": "C007"})

        answers.append(asyncio.run(run()))

    client = threading.Thread(target=call, daemon=True)
    client.start()
    held = wait_until(lambda: Call.objects.filter(status=Call.Status.PENDING).first(), message="the call held")
    hook.received(1)
    assert deciding.decide(held.pk, make_user("ann", superuser=True), True).won
    client.join(20)

    assert answers and not answers[0].is_error, "the client got no answer while the receiver hung"
    assert not hook.released.is_set()
    assert Call.objects.get(pk=held.pk).status == Call.Status.COMPLETED
    hook.release()


def test_it_posts_a_slack_compatible_text_with_a_link_to_the_call(
    sending, receiver, endpoint, client_token, refund_tool
):
    hook = receiver()
    _, secret = endpoint(hook.url, events=["call.pending"], slack=True)
    call = pending_call(client_token, refund_tool)

    (body,) = hook.verified(secret, 1)
    assert body == {
        "text": f"Call {call.pk} to `shop_issue_refund` from agent waits for a decision: "
        f"<http://console.test/calls/{call.pk}/|decide it>"
    }


def test_it_redelivers_on_an_admin_s_request_and_audits_it(sending, receiver, endpoint, client_token, refund_tool):
    hook = receiver()
    added, _ = endpoint(hook.url, events=["call.pending"])
    pending_call(client_token, refund_tool)
    attempts_recorded(added, 1)
    admin = Client()
    admin.force_login(make_user("ada", superuser=True))
    delivery = WebhookDelivery.objects.get(endpoint=added)

    assert admin.post(f"/webhooks/deliveries/{delivery.pk}/redeliver/").status_code == 302
    second = attempts_recorded(added, 2)[1]
    assert (second.number, second.status_code, second.requested_by) == (2, 204, "ada")
    assert len(hook.received(2)) == 2
    event = AuditEvent.objects.get(action="webhook.redelivered")
    assert event.actor_name == "ada" and event.data["delivery"]["message_id"] == delivery.message_id


def test_it_tells_the_admin_when_the_broker_refuses_a_redelivery_and_audits_none(
    monkeypatch, sending, receiver, endpoint, client_token, refund_tool
):
    added, _ = endpoint(receiver().url, events=["call.pending"])
    pending_call(client_token, refund_tool)
    attempts_recorded(added, 1)
    delivery = WebhookDelivery.objects.get(endpoint=added)
    admin = Client()
    admin.force_login(make_user("ada", superuser=True))

    def refused(*args, **kwargs):
        raise ConnectionRefusedError("the broker is down")

    monkeypatch.setattr(sending_module, "schedule", refused)
    page = admin.post(f"/webhooks/deliveries/{delivery.pk}/redeliver/", follow=True)

    assert page.status_code == 200
    assert "did not take the redelivery" in page.content.decode()
    assert not AuditEvent.objects.filter(action="webhook.redelivered").exists()


def test_it_sends_again_what_a_stopped_process_left_due_unless_its_endpoint_is_disabled(
    sending, receiver, endpoint, client_token, refund_tool
):
    hook, off = receiver(), receiver()
    added, secret = endpoint(hook.url, events=["call.pending"])
    disabled, _ = endpoint(off.url, events=["call.pending"])
    WebhookEndpoint.objects.filter(pk=disabled.pk).update(enabled=False)
    lost = {"type": "call.pending", "timestamp": "2026-11-23T10:00:00+00:00", "data": {"call": {"id": 1}}}
    for one in (added, disabled):
        WebhookDelivery.objects.create(
            endpoint=one, message_id=f"msg_lost{one.pk}", event_type="call.pending", payload=lost, next_attempt_at=now()
        )

    assert send_due() == 1
    assert hook.verified(secret, 1) == [lost]
    attempts_recorded(added, 1)
    assert off.requests == []


def test_it_gives_up_waiting_at_the_timeout_and_stops_after_the_last_attempt(
    settings, receiver, endpoint, client_token, refund_tool
):
    settings.WEBHOOK_TIMEOUT_SECONDS, settings.WEBHOOK_ATTEMPTS = 0.5, 1
    hook = receiver(hang=True)
    added, _ = endpoint(hook.url, events=["call.pending"])
    pending_call(client_token, refund_tool)

    (attempt,) = attempts_recorded(added, 1)
    assert attempt.error == "no answer within 0.5 seconds" and attempt.status_code is None
    assert attempt.response_ms < 5000
    assert WebhookDelivery.objects.get(endpoint=added).state == "failed"


def test_it_receives_the_call_when_the_broker_refuses_the_delivery_and_leaves_it_due(
    monkeypatch, endpoint, client_token, refund_tool
):
    def refused(*args, **kwargs):
        raise ConnectionRefusedError("the broker is down")

    monkeypatch.setattr(app, "send_task", refused)
    added, _ = endpoint("http://127.0.0.1:9/hook", events=["call.pending"])
    app.conf.task_always_eager = False
    try:
        call = pending_call(client_token, refund_tool)
    finally:
        app.conf.task_always_eager = True
    assert Call.objects.get(pk=call.pk).status == Call.Status.PENDING
    delivery = WebhookDelivery.objects.get(endpoint=added)
    assert delivery.attempts == 0 and delivery.next_attempt_at <= now()


def test_it_counts_each_attempt_by_its_outcome_in_the_metrics(sending, receiver, endpoint, client_token, refund_tool):
    def attempts(found):
        return {o: value(found, "mcp_console_webhook_deliveries_total", outcome=o) for o in ("retrying", "delivered")}

    before = attempts(collected())
    hook = receiver(500)
    added, _ = endpoint(hook.url, events=["call.pending"])
    pending_call(client_token, refund_tool)
    attempts_recorded(added, 2)
    expected = {"retrying": before["retrying"] + 1, "delivered": before["delivered"] + 1}
    wait_until(lambda: attempts(collected()) == expected, message=f"the attempts counted: {expected}")


def test_it_sends_a_test_event_keeps_both_bodies_and_says_failing_until_an_attempt_goes_through(
    sending, receiver, endpoint, admin_client
):
    hook = receiver((503, {}, b"down for maintenance"))
    added, secret = endpoint(hook.url, events=["call.pending"])

    assert admin_client.post(f"/webhooks/{added.pk}/test/").status_code == 302
    failed = attempts_recorded(added, 1)[0]
    assert hook.verified(secret, 1)[0]["type"] == "webhook.test"
    assert (failed.status_code, failed.response_body) == (503, "down for maintenance")
    assert '"type":"webhook.test"' in failed.request_body
    detail = admin_client.get(f"/webhooks/{added.pk}/").content.decode()
    assert "data-failing" in detail and "down for maintenance" in detail
    assert "data-failing" in admin_client.get("/webhooks/").content.decode()
    assert AuditEvent.objects.get(action="webhook.tested").actor_name == "admin"

    admin_client.post(f"/webhooks/{added.pk}/test/")
    wait_until(lambda: added.deliveries.filter(delivered_at__isnull=False).exists(), message="a test delivered")
    assert "data-failing" not in admin_client.get("/webhooks/").content.decode()
