"""Notifications end to end in Chromium: the account page subscribes the browser through the service worker with the
console's VAPID key; a new waiting call reaches a push service on loopback, which decrypts it as the browser would;
the service worker, handed that push, shows the notification; tapping it opens the call's page on a phone, whose
approval the audit log records as made through push from that device.

Chromium's own push service is Google's, out of reach here: the test stands in for it twice, answering
PushManager.subscribe with a subscription to its loopback push service, and delivering what that service decrypted
to the worker through the DevTools protocol (ServiceWorker.deliverPushMessage), as the browser would on receipt. The
run saves the account page and the call's page at 390 px under test-results/screenshots/ (git-ignored), to look at."""

import json

import pytest
from playwright.sync_api import expect

from approvals import roles
from approvals.audit.models import AuditEvent
from approvals.calls.models import Call
from approvals.push.models import PushDevice
from approvals.push.vapid import public_key
from tests.browser.test_people_browser import in_thread
from tests.browser.test_queue_layout_browser import PHONE, SHOTS
from tests.fixtures.calls import pending_call
from tests.fixtures.waiting import wait_until
from tests.push.service import PushService, b64

pytestmark = pytest.mark.browser

# PushManager.subscribe answered with the loopback service's subscription; the key the page passed is kept, across
# the form's post.
SUBSCRIBE = """subscription => {
  PushManager.prototype.subscribe = async function (options) {
    sessionStorage.subscribedWith = JSON.stringify(Array.from(new Uint8Array(options.applicationServerKey)));
    return { toJSON: () => subscription };
  };
}"""
NOTIFICATIONS = """async () => (await (await navigator.serviceWorker.ready).getNotifications())
  .map(n => ({ title: n.title, body: n.body, tag: n.tag, data: n.data }))"""


@pytest.fixture
def push_service(settings):
    settings.WEB_PUSH_ALLOWED_HOSTS = ["127.0.0.1"]
    service = PushService()
    yield service
    service.close()


def test_it_subscribes_shows_a_waiting_call_and_opens_it_on_a_phone_to_approve_through_push(
    live_console, push_service, person, client_token, refund_tool, open_full_browser
):
    browser_keys = push_service.browser("ann-phone")
    _, signed_in = person("ann", roles.OPERATOR)
    key = public_key()
    context = open_full_browser().new_context(viewport=PHONE, has_touch=True, is_mobile=True)
    context.grant_permissions(["notifications"], origin=live_console)
    context.add_cookies([{"name": "sessionid", "value": signed_in.cookies["sessionid"].value, "url": live_console}])
    context.add_init_script(f"({SUBSCRIBE})({json.dumps(browser_keys.subscription)})")
    page = context.new_page()
    page.goto(live_console + "/account/")
    page.get_by_label("Name of this device").fill("ann's phone")
    page.get_by_role("button", name="Turn on notifications").click()
    expect(page.locator("[data-push-device]")).to_contain_text("ann's phone")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SHOTS / "account-390-devices.png", full_page=True)
    assert b64(bytes(page.evaluate("JSON.parse(sessionStorage.subscribedWith)"))) == key
    assert page.evaluate("navigator.serviceWorker.controller?.scriptURL") == live_console + "/service-worker.js"

    call = in_thread(lambda: pending_call(client_token, refund_tool, {"order_id": 31, "amount": 12}))
    pushed = push_service.pushes(1)[0].payload
    device = in_thread(lambda: PushDevice.objects.get())
    assert pushed["url"] == f"/calls/{call.pk}/?push={device.pk}"

    devtools = context.new_cdp_session(page)
    registrations = []
    devtools.on("ServiceWorker.workerRegistrationUpdated", lambda event: registrations.extend(event["registrations"]))
    devtools.send("ServiceWorker.enable")
    page.evaluate("navigator.serviceWorker.ready.then(() => true)")
    wait_until(lambda: registrations or page.wait_for_timeout(50), timeout=10, message="the worker's registration")
    registration = next(r for r in registrations if r["scopeURL"] == live_console + "/")
    devtools.send(
        "ServiceWorker.deliverPushMessage",
        {"origin": live_console, "registrationId": registration["registrationId"], "data": json.dumps(pushed)},
    )
    # wait_for_function takes a promise for a truthy answer at once: the worker's notifications are polled here.
    [shown] = wait_until(lambda: page.evaluate(NOTIFICATIONS), timeout=10, message="the worker's notification")
    assert shown == {
        "title": f"Call {call.pk} waits for you",
        "body": "agent: shop_issue_refund\norder_id: 31, amount: 12",
        "tag": f"call-{call.pk}",
        "data": {"url": pushed["url"]},
    }

    # Tapping it: the worker's own choice of page for the notification it shows.
    [worker] = context.service_workers
    opened = worker.evaluate("async () => pageFor((await self.registration.getNotifications())[0])")
    assert opened == f"{live_console}/calls/{call.pk}/?push={device.pk}"
    page.goto(opened)
    expect(page.locator("body")).to_have_attribute("data-live", "connected")
    approve = page.get_by_role("button", name="Approve", exact=True)
    expect(approve).to_be_in_viewport()
    approve.tap()
    expect(page.locator("[data-outcome]")).to_contain_text("Approved")
    page.screenshot(path=SHOTS / "call-390-through-push.png")
    context.close()

    assert in_thread(lambda: Call.objects.get(pk=call.pk).status) in (Call.Status.APPROVED, Call.Status.FORWARDED)
    approved = in_thread(lambda: AuditEvent.objects.get(action="call.approved").data)
    assert approved | {"via": "push", "device": "ann's phone"} == approved
