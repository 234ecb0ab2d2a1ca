"""A call that waits for a person reaches the devices of those who may decide it: encrypted for each browser, signed
with the console's VAPID key, sent after commit off the call's path (by this process's threads embedded, by a celery
worker on PostgreSQL and Redis), to a push service the test runs on loopback."""

import pytest

from approvals import roles
from approvals.audit.models import AuditEvent
from approvals.calls import deciding
from approvals.calls.models import Call
from approvals.push import devices, vapid
from approvals.push.models import PushDevice
from tests.fixtures.calls import pending_call
from tests.fixtures.people import make_user
from tests.fixtures.waiting import wait_until

pytestmark = pytest.mark.django_db(transaction=True)


def device_of(user, service, name):
    browser = service.browser(name)
    return devices.turn_on(user, browser.subscription, name, "Mozilla/5.0 (Linux; Android 15) Chrome/140"), browser


def test_it_sends_a_new_waiting_call_encrypted_to_every_device_of_those_who_may_decide(
    sending, push_service, client_token, refund_tool
):
    service = push_service()
    ann, bob = make_user("ann", roles.OPERATOR), make_user("bob", roles.ADMIN)
    auditor = make_user("audrey", roles.AUDITOR)
    phone, _ = device_of(ann, service, "ann-phone")
    laptop, _ = device_of(bob, service, "bob-laptop")
    device_of(auditor, service, "audrey-phone")

    call = pending_call(client_token, refund_tool, {"order_id": 4242, "amount": 98.75})

    pushes = service.pushes(2)
    assert sorted(push.path for push in pushes) == ["/push/ann-phone", "/push/bob-laptop"]
    by_path = {push.path: push for push in pushes}
    payload = by_path["/push/ann-phone"].payload
    # The arguments in the order the database keeps them (PostgreSQL's jsonb sorts its keys).
    body, arguments = payload.pop("body").split("\n")
    assert (body, sorted(arguments.split(", "))) == ("agent: shop_issue_refund", ["amount: 98.75", "order_id: 4242"])
    assert payload == {
        "title": f"Call {call.pk} waits for you",
        "url": f"/calls/{call.pk}/?push={phone.pk}",
        "tag": f"call-{call.pk}",
    }
    assert by_path["/push/bob-laptop"].payload["url"] == f"/calls/{call.pk}/?push={laptop.pk}"
    for push in pushes:
        assert push.vapid_key == vapid.public_key()
        assert push.claims["aud"] == service.origin and push.claims["sub"].startswith("mailto:")
    wait_until(lambda: PushDevice.objects.filter(last_used_at__isnull=False).count() == 2, message="devices reached")
    assert service.refused == []


def test_it_forgets_a_device_whose_push_service_answers_410(sending, push_service, client_token, refund_tool):
    service = push_service(410)
    ann = make_user("ann", roles.OPERATOR)
    device, _ = device_of(ann, service, "old-phone")

    pending_call(client_token, refund_tool)

    service.pushes(1)
    wait_until(lambda: not PushDevice.objects.filter(pk=device.pk).exists(), message="the gone device forgotten")
    forgotten = AuditEvent.objects.get(action="push.device_forgotten")
    assert forgotten.actor_type == "system"
    assert forgotten.data | {"device_id": device.pk, "label": "old-phone", "status": 410} == forgotten.data


def test_it_asks_only_those_who_may_still_approve_a_quorum_missing_a_place(
    push_service, client_token, refund_tool, settings
):
    service = push_service()
    ann, bob = make_user("ann", roles.OPERATOR), make_user("bob", roles.OPERATOR)
    device_of(ann, service, "ann-phone")
    device_of(bob, service, "bob-phone")
    call = pending_call(client_token, refund_tool)
    Call.objects.filter(pk=call.pk).update(approvals_needed=2)
    service.pushes(2)

    assert deciding.decide(call.pk, ann, True, shown_binding=None).won

    later = service.pushes(3)[2]
    assert later.path == "/push/bob-phone"
    assert later.payload["title"] == f"Call {call.pk} needs another approval (1 of 2 approvals)"


def test_it_never_shows_a_value_whose_name_or_schema_says_it_is_secret(push_service, client_token, shop):
    from tests.fixtures.catalog import make_tool

    schema = {
        "type": "object",
        "properties": {"user": {"type": "string"}, "api_key": {"type": "string"}, "pin_code": {"writeOnly": True}},
    }
    tool = make_tool(shop, name="login", inputSchema=schema)
    service = push_service()
    device_of(make_user("ann", roles.OPERATOR), service, "ann-phone")

    pending_call(client_token, tool, {"user": "ann", "api_key": "sk-live-123", "pin_code": "0000"})

    body, arguments = service.pushes(1)[0].payload["body"].split("\n")
    assert sorted(arguments.split(", ")) == ["api_key: (hidden)", "pin_code: (hidden)", "user: ann"]


def test_it_tells_of_an_input_request_for_an_operator_and_not_of_one_the_client_answers(
    push_service, client_token, refund_tool
):
    from approvals.inputs import requests
    from approvals.inputs.models import InputRequest

    service = push_service()
    phone, _ = device_of(make_user("ann", roles.OPERATOR), service, "ann-phone")
    call = pending_call(client_token, refund_tool)
    service.pushes(1)
    ask = {"message": "Which warehouse ships it?", "requestedSchema": {"type": "object", "properties": {}}}
    requests.open_request(call, "elicitation/create", ask, InputRequest.Route.CLIENT)
    asked = requests.open_request(call, "elicitation/create", ask, InputRequest.Route.OPERATOR)

    later = service.pushes(2)[1]
    assert later.payload == {
        "title": f"Call {call.pk} asks for input",
        "body": "agent: shop_issue_refund\nWhich warehouse ships it?",
        "url": f"/inputs/{asked.pk}/?push={phone.pk}",
        "tag": f"input-{asked.pk}",
    }
    assert len(service.received) == 2


def test_it_tells_again_of_a_call_escalated_near_its_expiry(push_service, client_token, refund_tool):
    from approvals.calls import expiry

    service = push_service()
    device_of(make_user("ann", roles.OPERATOR), service, "ann-phone")
    call = pending_call(client_token, refund_tool)
    service.pushes(1)

    assert expiry.escalate(call.pk)

    later = service.pushes(2)[1]
    assert (later.payload["title"], later.payload["tag"]) == (f"Call {call.pk} expires soon", f"call-{call.pk}")
