"""Several operators on one queue: a person decides only the call their screen showed them, and nothing they type
can act on a call that changed or arrived meanwhile, nor while the console is out of reach."""

import asyncio
import itertools
import re
import threading
from datetime import timedelta

import httpx
import pytest
from django.utils import timezone
from playwright.sync_api import expect

from approvals.audit.models import AuditEvent
from approvals.calls import expiry
from approvals.calls.models import Call
from approvals.catalog.models import Server
from tests.browser.queue_pages import DWELL_MS, LOOKUP, ClientCall, console, pick, queue_page, row_of
from tests.browser.test_tokens_browser import in_thread
from tests.fixtures.gateway import hold_call
from tests.fixtures.outage import Forwarder
from tests.fixtures.waiting import wait_until

pytestmark = pytest.mark.browser
__all__ = ["console"]  # the fixture, used by name

REASON = "Reason (told to the client)"


class HeldCalls:
    """Real clients' tools/call requests, each held open on its stream until answered or hung up."""

    def __init__(self, mcp_url, secret):
        self.mcp_url, self.secret = mcp_url, secret
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.http = self.run(self.client())
        self.numbers = itertools.count(1)
        self.tasks = []

    async def client(self):
        return httpx.AsyncClient(timeout=None)

    def run(self, coroutine):
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(10)

    def hold(self, tool, arguments):
        async def start():
            return asyncio.ensure_future(hold_call(self.http, self.mcp_url, self.secret, tool, arguments, number))

        number = next(self.numbers)
        task = self.run(start())
        self.tasks.append(task)
        return task

    def hang_up(self, task):
        self.loop.call_soon_threadsafe(task.cancel)

    def close(self):
        for task in self.tasks:
            self.hang_up(task)
        self.run(self.http.aclose())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


@pytest.fixture
def held(console):
    calls = HeldCalls(console["mcp"], console["secret"])
    yield calls
    # A call cleared to run ends on its own; hung up while it runs, its cancellation would be written by the console
    # after this test's database is gone, in the next test's time.
    in_flight = Call.objects.filter(status__in=Call.IN_FLIGHT).exists
    wait_until(lambda: not in_flight(), timeout=10, message="the calls cleared to run ended")
    calls.close()


def decisions_by(username):
    return list(
        AuditEvent.objects.filter(actor_name=username, action__startswith="call.")
        .exclude(action__in=["call.claimed", "call.released"])
        .values_list("action", "call_id")
    )


def expire(call_id):
    Call.objects.filter(pk=call_id).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert expiry.expire_stale_calls() == 1


@pytest.mark.parametrize(
    ("how", "said"),
    [("decided", "Approved by bob"), ("expired", "Expired"), ("hung up", "Cancelled")],
)
def test_it_keeps_a_call_that_left_in_place_and_no_key_decides_until_the_operator_moves(
    console, held, open_browser, how, said
):
    Server.objects.filter(name="Demo").update(trusted=True)  # one key decides a read-only call: the easiest to leak
    first = held.hold(LOOKUP, {"customer_id": "C001"})
    browser = open_browser()
    ann = queue_page(browser, console, "ann")
    expect(row_of(ann)).to_have_count(1)
    held.hold(LOOKUP, {"customer_id": "C002"})
    expect(row_of(ann)).to_have_count(2)
    x = int(row_of(ann, "C001").get_attribute("data-call-row"))
    y = int(row_of(ann, "C002").get_attribute("data-call-row"))
    selected = ann.locator("[data-queue] [data-call-row].selected")

    # Ann starts a reason for denying X.
    panel = pick(ann, "C001")
    panel.get_by_placeholder(REASON).click()
    ann.keyboard.type("this looks")
    if how == "decided":
        bob = queue_page(browser, console, "bob")
        pick(bob, "C001").get_by_role("button", name="Approve", exact=True).click()
    elif how == "expired":
        in_thread(lambda: expire(x))
    else:
        held.hang_up(first)

    # X stays where it was, read-only, saying what happened; nothing moved under Ann's hands.
    expect(panel.locator("[data-left]")).to_contain_text(re.compile(said + r".*\d+s ago"))
    expect(selected).to_have_attribute("data-call-row", str(x))
    expect(panel.get_by_role("button", name="Deny")).to_be_disabled()
    expect(panel.get_by_role("button", name="Approve", exact=True)).to_be_disabled()
    # Ann's sentence goes on, and every key that could decide, in the field and out of it, after the dwell too.
    ann.keyboard.type(" and it is wrong, bazaar")
    ann.keyboard.press("Enter")
    ann.keyboard.press("Escape")
    for key in ("a", "a", "d", "d", "Enter", "e", "e"):
        ann.keyboard.press(key)
    ann.wait_for_timeout(2 * DWELL_MS)
    for key in ("a", "d", "d", "Enter", "a"):
        ann.keyboard.press(key)
    ann.wait_for_timeout(300)
    expect(selected).to_have_attribute("data-call-row", str(x))
    expect(ann).to_have_url(re.compile(r"/queue/$"))
    assert in_thread(lambda: decisions_by("ann")) == []
    assert in_thread(lambda: Call.objects.get(pk=y).status) == Call.Status.PENDING

    # Moving on takes the keys back: j selects Y, X goes, and after the dwell one key approves Y.
    ann.keyboard.press("j")
    expect(selected).to_have_attribute("data-call-row", str(y))
    expect(row_of(ann, "C001")).to_have_count(0)
    ann.wait_for_timeout(DWELL_MS)
    ann.keyboard.press("a")
    expect(row_of(ann)).to_have_count(0)
    assert in_thread(lambda: decisions_by("ann")) == [("call.approved", y)]


def test_it_sends_the_reason_exactly_as_typed_after_dd_on_a_read_only_tool(console, open_browser):
    Server.objects.filter(name="Demo").update(trusted=True)
    browser = open_browser()
    ann = queue_page(browser, console, "ann")
    client = ClientCall(console["mcp"], console["secret"], LOOKUP, {"customer_id": "C011"})
    expect(row_of(ann)).to_have_attribute("data-read-only", "true")
    ann.keyboard.press("j")
    ann.wait_for_timeout(DWELL_MS)

    ann.keyboard.press("d")
    ann.keyboard.press("d")
    expect(ann.locator("[data-queue-pane]").get_by_placeholder(REASON)).to_be_focused()
    ann.keyboard.type("Exports of customer data need a ticket")
    ann.keyboard.press("Enter")

    expect(row_of(ann)).to_have_count(0)
    assert client.answer().is_error
    denied = in_thread(lambda: Call.objects.get(status=Call.Status.DENIED))
    assert denied.reason == "Exports of customer data need a ticket"


def test_it_disables_decisions_while_the_server_is_away_and_never_leaves_the_queue(console, open_browser):
    forwarder = Forwarder(int(console["url"].rsplit(":", 1)[1]))
    forwarder.start()
    client = ClientCall(console["mcp"], console["secret"], LOOKUP, {"customer_id": "C013"})
    # The page opens on the call held, however long its client takes to connect on a loaded machine.
    wait_until(lambda: Call.objects.filter(status="pending").exists(), timeout=60, message="the call held")
    browser = open_browser()
    try:
        ann = queue_page(browser, {**console, "url": forwarder.url}, "ann")
        panel = pick(ann, "C013")
        approve = panel.get_by_role("button", name="Approve", exact=True)
        expect(approve).to_be_enabled()

        forwarder.stop()
        expect(approve).to_be_disabled(timeout=1_000)
        expect(panel).to_contain_text("Not connected, retrying")
        pill = ann.locator("[data-live-status]").bounding_box()
        for button in panel.get_by_role("button").all() + panel.get_by_role("link").all():
            box = button.bounding_box()
            if box:
                apart = (
                    box["x"] + box["width"] <= pill["x"]
                    or pill["x"] + pill["width"] <= box["x"]
                    or box["y"] + box["height"] <= pill["y"]
                    or pill["y"] + pill["height"] <= box["y"]
                )
                assert apart, "the connection pill covers a control"
        ann.wait_for_timeout(1_500)
        forwarder.start()
        expect(approve).to_be_enabled(timeout=5_000)
        expect(ann).to_have_url(re.compile(r"/queue/$"))

        # A decision whose request fails stays on the panel, to be sent again.
        ann.route(re.compile(r"/queue/\d+/decide/"), lambda route: route.abort())
        approve.click()
        unsent = panel.locator("[data-unsent]")
        expect(unsent).to_contain_text("Not sent")
        expect(ann).to_have_url(re.compile(r"/queue/$"))
        assert client.thread.is_alive()
        ann.unroute(re.compile(r"/queue/\d+/decide/"))
        unsent.get_by_role("button", name="retry").click()
        expect(ann.locator("[data-queue-log]")).to_contain_text(re.compile(r"Call \d+ approved · view"))
        assert "Customer C013" in client.text()
    finally:
        forwarder.stop()
