"""The live pages' connection in Chromium: what a page catches up on at its first connection and once back from an
outage, and a page whose user may no longer watch calls."""

import re

import pytest
from playwright.sync_api import expect

from approvals import roles
from approvals.calls import deciding, lifecycle
from approvals.protocol import revisions
from approvals.tokens import credentials
from approvals.tokens.context import ClientContext
from tests.browser.queue_pages import LOOKUP, ClientCall, console, pick, queue_page, row_of
from tests.browser.test_tokens_browser import in_thread

pytestmark = pytest.mark.browser
__all__ = ["console"]  # the fixture, used by name


def hold_refund(tool, token, order_id):
    ctx = ClientContext(token, revisions.MODERN, "2026-07-28")
    return lifecycle.receive_call(ctx, tool, {"order_id": order_id, "amount": 40}, 1, None)[0]


def operator_page(browser, base, session):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.add_cookies([{"name": "sessionid", "value": session, "url": base}])
    page = context.new_page()
    page.set_default_timeout(15_000)
    return page


def opened_with_its_script_held(page, url, meanwhile):
    """Opens `url` on `page`, running `meanwhile` once the console rendered it and before the page's script, which
    opens its socket, has arrived: what happens then is announced while nothing on the page listens. Returns the
    main frame's navigations."""

    def script_after(route):
        script = route.fetch()
        in_thread(meanwhile)
        route.fulfill(response=script)

    navigations = []
    page.on("framenavigated", lambda frame: navigations.append(frame.url) if frame == page.main_frame else None)
    # The script, not the page, is held: a page Playwright hands over comes from no address, and Chromium would
    # refuse it a socket to this machine.
    page.route("**/static/console.js", script_after, times=1)
    page.goto(url)
    return navigations


def test_it_shows_a_call_that_arrived_between_the_queue_s_render_and_its_socket(
    live_console, person, refund_tool, open_browser
):
    _, client = person("ann", roles.OPERATOR)
    token = credentials.create_token("late agent")[0]
    ann = operator_page(open_browser(), live_console, client.cookies["sessionid"].value)
    url = live_console + "/queue/"

    navigations = opened_with_its_script_held(ann, url, lambda: hold_refund(refund_tool, token, 1012))

    expect(ann.locator("[data-queue] [data-call-row]", has_text="1012")).to_be_visible()
    expect(ann.locator("[data-pending-count]")).to_have_text("1")
    expect(ann.locator("body")).to_have_attribute("data-live", "connected")
    assert navigations == [url]


def test_it_shows_a_call_s_page_the_decision_taken_between_its_render_and_its_socket(
    live_console, person, refund_tool, open_browser
):
    _, client = person("ann", roles.OPERATOR)
    bob, _ = person("bob", roles.OPERATOR)
    call = hold_refund(refund_tool, credentials.create_token("late agent")[0], 1012)
    ann = operator_page(open_browser(), live_console, client.cookies["sessionid"].value)
    url = f"{live_console}/calls/{call.pk}/"

    navigations = opened_with_its_script_held(ann, url, lambda: deciding.decide(call.pk, bob, False, "wrong order"))

    expect(ann.locator(f"[data-call-body='{call.pk}']")).to_contain_text("Denied by bob: wrong order")
    expect(ann.get_by_role("button", name="Approve", exact=True)).to_have_count(0)
    assert navigations == [url]


def test_it_keeps_a_call_pushed_while_the_page_reads_itself_again(live_console, person, refund_tool, open_browser):
    _, client = person("ann", roles.OPERATOR)
    token = credentials.create_token("late agent")[0]
    ann = operator_page(open_browser(), live_console, client.cookies["sessionid"].value)
    url = live_console + "/queue/"
    sockets = []
    ann.on("websocket", lambda socket: sockets.append(socket))

    def pushed_while_read(route):
        rendered = route.fetch()
        with sockets[-1].expect_event("framereceived", predicate=lambda frame: '"call.pending"' in frame):
            in_thread(lambda: hold_refund(refund_tool, token, 2024))
        route.fulfill(response=rendered)

    def script_after_the_first_call(route):
        script = route.fetch()
        in_thread(lambda: hold_refund(refund_tool, token, 1012))
        # The page's read of itself, which that call makes it do, is read before the second call and handed over
        # after the page was told of it.
        ann.route(url, pushed_while_read, times=1)
        route.fulfill(response=script)

    ann.route("**/static/console.js", script_after_the_first_call, times=1)
    ann.goto(url)

    expect(ann.locator("[data-queue] [data-call-row]", has_text="1012")).to_be_visible()
    expect(ann.locator("[data-queue] [data-call-row]", has_text="2024")).to_be_visible()
    expect(ann.locator("[data-pending-count]")).to_have_text("2")


def test_it_says_when_it_is_reconnecting_and_catches_up_once_back(console, open_browser):
    browser = open_browser()
    ann, bob = queue_page(browser, console, "ann"), queue_page(browser, console, "bob")
    body = ann.locator("body")

    ann.context.set_offline(True)
    expect(body).to_have_attribute("data-live", "reconnecting", timeout=3_000)
    expect(ann.locator("[data-live-status]")).to_contain_text("reconnecting")
    client = ClientCall(console["mcp"], console["secret"], LOOKUP, {"customer_id": "C005"})
    expect(row_of(bob)).to_be_visible()
    expect(row_of(ann)).to_have_count(0)

    ann.context.set_offline(False)
    expect(body).to_have_attribute("data-live", "connected")
    expect(ann.locator("[data-live-status]")).to_have_text("Live")
    expect(row_of(ann)).to_contain_text("C005")
    pick(ann, "C005").get_by_role("button", name="Approve", exact=True).click()
    assert "Customer C005" in client.text()


def test_it_takes_the_queue_away_from_a_tab_whose_user_logged_out_in_another(console, open_browser):
    browser = open_browser()
    watching = queue_page(browser, console, "ann")
    other_tab = watching.context.new_page()
    other_tab.goto(console["url"] + "/queue/")

    other_tab.get_by_role("button", name="Log out").click()

    expect(watching).to_have_url(re.compile(r"/login/"))
    expect(watching.get_by_role("button", name="Approve")).to_have_count(0)
