"""With notifications granted, a new call raises a browser notification, and clicking it opens the call's page."""

import re

import pytest
from playwright.sync_api import expect

from approvals import roles
from tests.browser.queue_pages import LOOKUP, ClientCall
from tests.fixtures.waiting import wait_until

pytestmark = pytest.mark.browser

# Records each notification the page raises instead of showing it, keeping the real permission; and the
# operator is in another tab, where the queue announces arrivals (a focused page shows them itself).
RECORD_NOTIFICATIONS = """
(() => {
  const Real = window.Notification;
  window.raised = [];
  function Recorded(title, options = {}) {
    const note = { title, body: options.body, tag: options.tag, onclick: null };
    window.raised.push(note);
    return note;
  }
  Object.defineProperty(Recorded, "permission", { get: () => Real.permission });
  Recorded.requestPermission = (...args) => Real.requestPermission(...args);
  window.Notification = Recorded;
  document.hasFocus = () => false;
})();
"""


def test_it_raises_a_notification_for_a_new_call_that_opens_the_call_s_page(
    live_console, demo_server, secret, person, open_full_browser
):
    _, operator = person("olivia", roles.OPERATOR)
    context = open_full_browser().new_context()
    context.grant_permissions(["notifications"], origin=live_console)
    context.add_init_script(RECORD_NOTIFICATIONS)
    context.add_cookies([{"name": "sessionid", "value": operator.cookies["sessionid"].value, "url": live_console}])
    page = context.new_page()
    page.goto(live_console + "/queue/")
    expect(page.locator("body")).to_have_attribute("data-live", "connected")
    page.get_by_role("button", name="Notify me of new calls").click()
    expect(page.locator("[data-notify-toggle]")).to_have_text("Notifications: on")

    client = ClientCall(live_console + "/mcp", secret, LOOKUP, {"customer_id": "C007"})
    # Polled from here: the page's CSP forbids the string evaluation wait_for_function relies on.
    wait_until(lambda: page.evaluate("window.raised.length") > 0, timeout=15, message="a notification raised")
    note = page.evaluate("window.raised.map(({ title, body, tag }) => ({ title, body, tag }))[0]")
    assert note["title"] == "A call waits for approval" and LOOKUP in note["body"]
    call_id = note["tag"].removeprefix("call-")

    page.evaluate("window.raised[0].onclick(new Event('click'))")
    expect(page).to_have_url(re.compile(rf"/calls/{call_id}/$"))
    page.get_by_role("button", name="Approve").click()
    assert "Customer C007" in client.text()
