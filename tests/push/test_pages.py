"""The account page turns notifications on for a device, lists and removes them; the page a notification opens
sends its device back with the decision, which the audit log records as made through push from that device."""

import json

import pytest
from django.test import Client

from approvals import roles
from approvals.audit.models import AuditEvent
from approvals.calls.lifecycle import call_binding
from approvals.push import devices, vapid
from approvals.push.models import PushDevice
from tests.fixtures.calls import pending_call
from tests.fixtures.people import make_user
from tests.push.service import Browser

pytestmark = pytest.mark.django_db

PHONE = "Mozilla/5.0 (Linux; Android 15; Pixel 9) Chrome/140.0 Mobile Safari/537.36"


def signed_in(user) -> Client:
    client = Client(HTTP_USER_AGENT=PHONE)
    client.force_login(user)
    return client


def test_it_turns_notifications_on_lists_the_device_and_removes_it():
    ann = make_user("ann", roles.OPERATOR)
    client = signed_in(ann)
    page = client.get("/account/").content.decode()
    assert f'data-vapid-key="{vapid.public_key()}"' in page and 'data-service-worker="/service-worker.js"' in page

    browser = Browser("https://push.example.net/send/abc")
    answer = client.post(
        "/account/devices/", {"subscription": json.dumps(browser.subscription), "label": "ann's phone"}, follow=True
    )
    assert "Notifications are on for ann&#x27;s phone" in answer.content.decode()
    device = PushDevice.objects.get(user=ann)
    assert (device.endpoint, device.user_agent) == ("https://push.example.net/send/abc", PHONE)
    listed = client.get("/account/").content.decode()
    assert f'data-push-device="{device.pk}"' in listed and "Pixel 9" in listed
    added = AuditEvent.objects.get(action="push.device_added")
    assert added.data == {
        "device_id": device.pk,
        "label": "ann's phone",
        "user": "ann",
        "push_service": "push.example.net",
    }

    client.post(f"/account/devices/{device.pk}/remove/")
    assert not PushDevice.objects.exists()
    assert AuditEvent.objects.get(action="push.device_removed").data["device_id"] == device.pk


@pytest.mark.parametrize(
    "subscription, why",
    [
        ("not json", "the browser sent no subscription"),
        (json.dumps({"endpoint": "ftp://push.example.net/x", "keys": {}}), "only http and https URLs are allowed"),
        (json.dumps({"endpoint": "https://push.example.net/x", "keys": {"p256dh": "AAAA", "auth": "AAAA"}}), "p256dh"),
    ],
)
def test_it_keeps_no_device_from_what_is_not_a_subscription(subscription, why):
    client = signed_in(make_user("ann", roles.OPERATOR))
    answer = client.post("/account/devices/", {"subscription": subscription, "label": "x"}, follow=True)
    assert why in answer.content.decode() and "Notifications are not on" in answer.content.decode()
    assert not PushDevice.objects.exists() and not AuditEvent.objects.filter(action="push.device_added").exists()


def test_it_lets_nobody_remove_another_persons_device_nor_an_auditor_turn_notifications_on():
    ann, bob = make_user("ann", roles.OPERATOR), make_user("bob", roles.OPERATOR)
    device = devices.turn_on(ann, Browser("https://push.example.net/a").subscription, "phone")
    signed_in(bob).post(f"/account/devices/{device.pk}/remove/")
    assert PushDevice.objects.filter(pk=device.pk).exists()

    auditor = signed_in(make_user("audrey", roles.AUDITOR))
    assert "data-push-devices" not in auditor.get("/account/").content.decode()
    subscription = json.dumps(Browser("https://push.example.net/b").subscription)
    assert auditor.post("/account/devices/", {"subscription": subscription, "label": "x"}).status_code == 403


def test_it_records_a_decision_made_on_the_page_a_notification_opened_as_through_push_from_that_device(
    client_token, refund_tool
):
    ann = make_user("ann", roles.OPERATOR)
    phone = devices.turn_on(ann, Browser("https://push.example.net/a").subscription, "ann's phone")
    call = pending_call(client_token, refund_tool)
    client = signed_in(ann)

    page = client.get(f"/calls/{call.pk}/?push={phone.pk}").content.decode()
    assert page.count(f'<input type="hidden" name="push" value="{phone.pk}">') == 2
    assert f"push={phone.pk}" in page  # the live socket's query, so that pushed forms keep it

    form = {"decision": "approve", "binding": call_binding(call), "push": phone.pk}
    assert client.post(f"/queue/{call.pk}/decide/", form).status_code == 302
    approved = AuditEvent.objects.get(action="call.approved")
    assert approved.data | {"via": "push", "device": "ann's phone"} == approved.data


def test_it_ignores_a_marker_that_names_no_device_of_the_person_deciding(client_token, refund_tool):
    ann, bob = make_user("ann", roles.OPERATOR), make_user("bob", roles.OPERATOR)
    phone = devices.turn_on(ann, Browser("https://push.example.net/a").subscription, "ann's phone")
    call = pending_call(client_token, refund_tool)
    client = signed_in(bob)
    assert 'name="push"' not in client.get(f"/calls/{call.pk}/?push={phone.pk}").content.decode()

    client.post(
        f"/queue/{call.pk}/decide/",
        {"decision": "deny", "reason": "no", "binding": call_binding(call), "push": phone.pk},
    )
    denied = AuditEvent.objects.get(action="call.denied")
    assert denied.data["via"] == "queue" and "device" not in denied.data


def test_it_serves_the_service_worker_over_the_whole_site_and_the_manifest_with_vendored_icons(client):
    worker = client.get("/service-worker.js")
    assert worker["Content-Type"].startswith("text/javascript") and b'addEventListener("push"' in worker.content
    manifest = client.get("/manifest.webmanifest")
    assert manifest["Content-Type"] == "application/manifest+json"
    body = manifest.json()
    assert body["scope"] == "/" and body["start_url"] == "/queue/" and body["display"] == "standalone"
    for icon in body["icons"]:
        assert icon["src"].startswith("/static/icons/")


def test_it_carries_the_device_through_edit_then_approve(client_token, refund_tool):
    ann = make_user("ann", roles.OPERATOR)
    phone = devices.turn_on(ann, Browser("https://push.example.net/a").subscription, "ann's phone")
    call = pending_call(client_token, refund_tool, {"order_id": 7, "amount": 20})
    client = signed_in(ann)
    assert (
        f"/queue/{call.pk}/edit/?push={phone.pk}" in client.get(f"/calls/{call.pk}/?push={phone.pk}").content.decode()
    )

    form = {"binding": call_binding(call), "arg-order_id": "7", "arg-amount": "15", "reason": "less"}
    assert client.post(f"/queue/{call.pk}/edit/?push={phone.pk}", form).status_code == 302
    edited = AuditEvent.objects.get(action="call.edited")
    assert edited.data["via"] == "push" and edited.data["device"] == "ann's phone"
