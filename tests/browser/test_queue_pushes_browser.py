"""Rows the queue is pushed, in Chromium: what upstream servers and clients wrote is shown as text and runs nowhere,
and a live call lands in its group on the page that ends it, and only in the counts elsewhere."""

import threading

import pytest
from playwright.sync_api import expect

from approvals.calls import lifecycle
from approvals.catalog.models import Server, Tool
from approvals.protocol import revisions
from approvals.protocol.tools import tool_digest
from approvals.tokens import credentials
from approvals.tokens.context import ClientContext
from tests.browser.queue_pages import console, queue_page, row_of

pytestmark = pytest.mark.browser
__all__ = ["console"]  # the fixture, used by name

HOSTILE = '<img src=x onerror=alert(1)><script>alert("pwned")</script>'


def hostile_tool():
    server = Server.objects.create(name="Shady <b>server</b>", transport="stdio", command="true", tool_prefix="shady_")
    definition = {
        "name": "export",
        "title": f"Export {HOSTILE}",
        "description": f"Exports everything. {HOSTILE}",
        "inputSchema": {
            "type": "object",
            "properties": {"target": {"type": "string", "title": HOSTILE, "description": HOSTILE}},
        },
    }
    return Tool.objects.create(
        server=server,
        upstream_name="export",
        exposed_name="shady_export",
        definition=definition,
        digest=tool_digest(definition),
    )


def hold_call(tool, token):
    ctx = ClientContext(token, revisions.MODERN, "2026-07-28")
    return lifecycle.receive_call(ctx, tool, {"target": HOSTILE}, 1, None)[0]


def test_it_shows_markup_from_upstream_and_clients_as_text_and_runs_none_of_it(console, open_browser):
    tool = hostile_tool()
    token = credentials.create_token("hostile agent")[0]
    waiting = hold_call(tool, token)
    browser = open_browser()
    dialogs, errors = [], []
    ann = queue_page(browser, console, "ann")
    ann.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    ann.on("pageerror", lambda error: errors.append(str(error)))

    # One call was there when the page loaded; another arrives over the websocket.
    pushed = threading.Thread(target=hold_call, args=(tool, token))
    pushed.start()
    pushed.join()
    rows = row_of(ann, "shady_export")
    expect(rows).to_have_count(2)
    for index in range(2):
        expect(rows.nth(index).get_by_text(HOSTILE).first).to_be_visible()
        rows.nth(index).locator(".row-main").click()
        detail = ann.locator("[data-queue-pane] [data-call-detail]")
        expect(detail.get_by_text(f"Exports everything. {HOSTILE}")).to_be_visible()
        expect(detail.get_by_text(HOSTILE).first).to_be_visible()
    expect(ann.locator("img[src=x]")).to_have_count(0)

    ann.goto(f"{console['url']}/calls/{waiting.pk}/")
    expect(ann.get_by_text(HOSTILE).first).to_be_visible()
    # A real pause, not a wait: nothing may happen, and a payload that got through would need a moment to act.
    ann.wait_for_timeout(300)
    assert dialogs == [] and errors == []
    assert ann.evaluate("document.querySelectorAll('script:not([src])').length") == 0


def test_it_places_a_live_call_by_its_group_without_breaking_an_earlier_page(console, open_browser, settings):
    settings.QUEUE_PAGE_SIZE = 2
    tool = hostile_tool()
    first, second = (credentials.create_token(name)[0] for name in ("first agent", "second agent"))
    for _ in range(3):
        hold_call(tool, first)
    browser = open_browser()
    earlier, last = queue_page(browser, console, "ann"), queue_page(browser, console, "bob")
    last.goto(console["url"] + "/queue/?page=2")
    expect(last.locator("body")).to_have_attribute("data-live", "connected")
    expect(row_of(earlier, "shady_export")).to_have_count(2)
    expect(row_of(last, "shady_export")).to_have_count(1)

    for token in (first, second):
        arriving = threading.Thread(target=hold_call, args=(tool, token))
        arriving.start()
        arriving.join()

    # The last page takes the new call in its group and the new group; the earlier page keeps its rows.
    expect(last.locator("[data-group]")).to_have_count(2)
    expect(row_of(last, "shady_export")).to_have_count(3)
    expect(earlier.locator("[data-queue-elsewhere]")).to_have_text("2 new calls arrived for other pages.")
    expect(row_of(earlier, "shady_export")).to_have_count(2)
    expect(earlier.locator("[data-group] [data-group-count]")).to_have_text("4")
    expect(last.locator("[data-group] [data-group-count]").first).to_have_text("4")
