"""Which steps become which webhook events, for the endpoints that want them, and the bodies they get."""

from datetime import timedelta

import pytest
from django.utils import timezone

from approvals.actions import verification
from approvals.audit import verify
from approvals.calls import deciding, ending
from approvals.calls.models import Call
from approvals.catalog import sync
from approvals.inputs import requests
from approvals.inputs.models import InputRequest
from approvals.upstream.spec import ServerIdentity
from approvals.webhooks import bodies, endpoints, sending
from approvals.webhooks.models import WebhookDelivery
from tests.fixtures.calls import pending_call
from tests.fixtures.people import make_user

ALL_EVENTS = list(endpoints.EVENT_TYPES)
FORM_PARAMS = {"message": "Which account?", "requestedSchema": {"type": "object", "properties": {}}}


@pytest.fixture
def hooks(db):
    """Adds an endpoint wanting `events` (every one by default); deliveries(endpoint) are its event types, in order."""
    admin = make_user("root", superuser=True)

    def add(events=ALL_EVENTS, enabled=True):
        fields = {"url": "http://127.0.0.1:9/hook", "description": "", "events": list(events), "slack": False}
        return endpoints.create_endpoint({**fields, "enabled": enabled, "console_url": "http://c.test"}, admin)[0]

    return add


def types(endpoint) -> list[str]:
    return list(WebhookDelivery.objects.filter(endpoint=endpoint).order_by("id").values_list("event_type", flat=True))


def test_it_tells_of_a_call_held_then_expired(hooks, client_token, refund_tool):
    endpoint = hooks()
    call = pending_call(client_token, refund_tool)
    assert ending.end_pending(call.pk, Call.Status.EXPIRED, "no operator decided within 10 minutes")
    assert types(endpoint) == ["call.pending", "call.finished"]
    finished = WebhookDelivery.objects.filter(endpoint=endpoint).latest("id").payload
    assert finished["data"]["call"]["status"] == "expired"
    assert finished["data"]["url"] == f"http://c.test/calls/{call.pk}/"


def test_it_tells_of_an_approval_only_when_it_decides_the_call(hooks, client_token, refund_tool, operators):
    endpoint = hooks()
    call = pending_call(client_token, refund_tool)
    Call.objects.filter(pk=call.pk).update(approvals_needed=2)
    assert deciding.decide(call.pk, operators[0], True).won
    assert types(endpoint) == ["call.pending"]
    assert deciding.decide(call.pk, operators[1], True).won
    assert ending.mark_forwarded(Call.objects.get(pk=call.pk))
    assert types(endpoint) == ["call.pending", "call.decided"]


def test_it_sends_only_what_an_enabled_endpoint_chose(hooks, client_token, refund_tool):
    decided_only, disabled = hooks(["call.decided"]), hooks(enabled=False)
    pending_call(client_token, refund_tool)
    assert types(decided_only) == [] and types(disabled) == []


def test_it_tells_of_an_input_request_only_when_an_operator_must_answer_it(hooks, client_token, refund_tool):
    endpoint = hooks(["input.requested"])
    call = pending_call(client_token, refund_tool)
    asked = requests.open_request(call, "elicitation/create", FORM_PARAMS, InputRequest.Route.OPERATOR)
    requests.open_request(call, "elicitation/create", FORM_PARAMS, InputRequest.Route.CLIENT)
    (delivery,) = WebhookDelivery.objects.filter(endpoint=endpoint)
    assert delivery.payload["data"]["input"]["id"] == asked.pk
    assert delivery.payload["data"]["call"]["id"] == call.pk
    assert delivery.payload["data"]["url"] == f"http://c.test/inputs/{asked.pk}/"


def test_it_tells_of_tools_that_wait_for_review(hooks, shop):
    endpoint = hooks(["tool.needs_review"])
    identity = ServerIdentity("2025-11-25", "legacy", {}, {"tools": {}}, "")
    sync.apply_catalog(shop, identity, [{"name": "wipe", "inputSchema": {"type": "object"}}])
    (delivery,) = WebhookDelivery.objects.filter(endpoint=endpoint)
    assert (
        delivery.payload["data"] | {"tools": ["shop_wipe"], "url": "http://c.test/review/"} == delivery.payload["data"]
    )


def test_it_tells_of_prompts_and_resources_that_wait_for_review_beside_the_tools(hooks, shop):
    endpoint = hooks(["tool.needs_review"])
    identity = ServerIdentity("2025-11-25", "legacy", {}, {"tools": {}, "prompts": {}, "resources": {}}, "")
    listings = {"prompts": [{"name": "greet"}], "resources": [{"uri": "docs://a", "name": "a"}]}
    sync.apply_catalog(shop, identity, [], listings)
    (delivery,) = WebhookDelivery.objects.filter(endpoint=endpoint)
    data = delivery.payload["data"]
    assert (data["tools"], data["prompts"], data["resources"]) == ([], ["shop_greet"], ["docs://a"])
    assert "`shop_greet`" in bodies.slack_text(delivery.payload)


def test_it_tells_of_a_failed_audit_verification_and_not_of_a_passed_one(hooks, monkeypatch):
    endpoint = hooks(["audit.verification_failed"])
    verification.run("schedule")
    assert types(endpoint) == []
    broken = verify.Verdict(False, broken_seq=7, problem="the event was changed after it was written")
    monkeypatch.setattr(verify, "verify_chain", lambda expect=None: broken)
    verification.run("schedule")
    (delivery,) = WebhookDelivery.objects.filter(endpoint=endpoint)
    assert delivery.payload["data"]["verification"]["broken_seq"] == 7
    assert "changed after" in bodies.slack_text(delivery.payload)


def test_it_keeps_slack_markup_out_of_names():
    payload = {"type": "call.pending", "data": {"call": {"id": 1, "tool": "<!channel>", "client": "a&b"}, "url": "u"}}
    assert bodies.slack_text(payload) == "Call 1 to `&lt;!channel&gt;` from a&amp;b waits for a decision: <u|decide it>"


def test_it_waits_four_times_longer_before_each_retry_and_never_more_than_an_hour(settings):
    settings.WEBHOOK_RETRY_SECONDS = 10
    assert [sending.retry_delay(n) for n in range(1, 8)] == [10, 40, 160, 640, 2560, 3600, 3600]


def test_it_drops_deliveries_long_finished_or_whose_endpoint_is_gone(hooks):
    endpoint, month_ago, later = hooks(), timezone.now() - timedelta(days=31), timezone.now() + timedelta(hours=1)

    def delivery(name, endpoint_id=endpoint.pk, **fields):
        return WebhookDelivery.objects.create(
            endpoint_id=endpoint_id, message_id=name, event_type="call.pending", payload={}, **fields
        )

    delivery("recent")
    delivery("old", created_at=month_ago)
    delivery("old but retrying", created_at=month_ago, next_attempt_at=later)
    delivery("orphan", endpoint_id=endpoint.pk + 1000, next_attempt_at=later)

    assert sending.send_due() == 0
    assert set(WebhookDelivery.objects.values_list("message_id", flat=True)) == {"recent", "old but retrying"}
