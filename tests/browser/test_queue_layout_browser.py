"""The queue at 1440, 1280 and 390 px: the first row high on a laptop, risk on each row, and on a phone a list
whose tapped call opens with its decisions in a bar in reach. The run saves the screenshots under
test-results/screenshots/ (git-ignored), to look at."""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from approvals.calls import lifecycle
from approvals.calls.models import Call
from approvals.catalog.models import Server, Tool
from approvals.protocol import revisions
from approvals.tokens import credentials
from approvals.tokens.context import ClientContext
from tests.browser.queue_pages import LOOKUP, ClientCall, console, pick, queue_page, row_of
from tests.fixtures.waiting import wait_until

pytestmark = pytest.mark.browser
__all__ = ["console"]  # the fixture, used by name

SHOTS = Path(__file__).resolve().parents[2] / "test-results" / "screenshots"
PHONE = {"width": 390, "height": 844}
# Every element that runs off the right edge of the window.
OVERFLOWING = """() => [...document.querySelectorAll("body *")]
    .filter((el) => el.getClientRects().length && el.getBoundingClientRect().right > window.innerWidth + 1)
    .map((el) => el.tagName + "." + el.className)"""
# How many of the queue's rows are wholly in sight.
VISIBLE_ROWS = """() => [...document.querySelectorAll("[data-queue] [data-call-row]")].filter((row) => {
    const box = row.getBoundingClientRect();
    return box.height > 0 && box.top >= 0 && box.bottom <= window.innerHeight;
}).length"""
# Every pair of the parts of one row that overlap on screen, by class name.
OVERLAPS = """() => [...document.querySelectorAll("[data-queue] .row-line")].flatMap((line) => {
    const parts = [...line.querySelectorAll(".row-tool, .row-client, .row-args, .row-flags, .row-left, input")]
        .filter((el) => el.getClientRects().length);
    const boxes = parts.map((el) => [el.className || el.tagName, el.getBoundingClientRect()]);
    return boxes.flatMap(([a, p], i) => boxes.slice(i + 1).filter(([, q]) =>
        p.left < q.right - 1 && q.left < p.right - 1 && p.top < q.bottom - 1 && q.top < p.bottom - 1
    ).map(([b]) => `${a} × ${b}`));
})"""


def hold_risky_calls():
    """Pending calls to a read-only, a destructive and a may-write tool of the trusted demo, and long arguments."""
    Server.objects.filter(name="Demo").update(trusted=True)
    ctx = ClientContext(credentials.create_token("a client with a rather long name")[0], revisions.MODERN, "2026-07-28")
    asked = [
        (LOOKUP, {"customer_id": "C001"}),
        ("demo_delete_record", {"record_type": "order", "record_id": "O1001"}),
        ("demo_issue_refund", {"order_id": "O1002"}),
        (LOOKUP, {"customer_id": "C002"}),
    ]
    for number, (name, arguments) in enumerate(asked, 1):
        call, answer = lifecycle.receive_call(ctx, Tool.objects.get(exposed_name=name), arguments, number, None)
        assert answer is None, answer


def test_it_shows_risk_on_each_row_starts_the_list_high_and_saves_the_queue_at_three_widths(console, open_browser):
    hold_risky_calls()
    browser = open_browser()
    ann = queue_page(browser, console, "ann")
    SHOTS.mkdir(parents=True, exist_ok=True)
    expect(row_of(ann, "demo_delete_record").locator("[data-risk]")).to_have_text("destructive")
    expect(row_of(ann, "demo_issue_refund").locator("[data-risk]")).to_have_text("may write")
    expect(row_of(ann, LOOKUP).first.locator("[data-risk]")).to_have_text("read-only")
    panel = pick(ann, "demo_issue_refund")
    expect(panel.locator("[data-annotations]")).to_contain_text("destructiveHint false")

    for width, height in ((1440, 900), (1280, 800), (390, 844)):
        ann.set_viewport_size({"width": width, "height": height})
        ann.goto(console["url"] + "/queue/")
        expect(row_of(ann, "demo_")).to_have_count(4)
        ann.screenshot(path=SHOTS / f"queue-{width}.png")
        if width == 1440:
            top = ann.locator("[data-queue] [data-call-row]").first.bounding_box()["y"]
            assert top <= 160, f"the first row starts {top} px down"
        assert ann.evaluate(OVERFLOWING) == []
        assert ann.evaluate(OVERLAPS) == []
        pick(ann, "demo_delete_record")
        assert ann.evaluate(OVERFLOWING) == []
        ann.screenshot(path=SHOTS / f"queue-{width}-selected.png")
    assert {f"queue-{width}.png" for width in (1440, 1280, 390)} <= {shot.name for shot in SHOTS.iterdir()}


def test_it_opens_a_tapped_call_on_a_phone_and_approves_it_from_the_sticky_bar(console, open_browser):
    client = ClientCall(console["mcp"], console["secret"], LOOKUP, {"customer_id": "C014"})
    for number in range(1, 9):
        ClientCall(console["mcp"], console["secret"], "demo_export_report", {"report": "orders", "seconds": number})
    # Nine SDK clients connecting at once take a while on a loaded machine: the page opens on the nine held.
    wait_until(lambda: Call.objects.filter(status="pending").count() == 9, timeout=60, message="nine calls held")
    browser = open_browser()
    context = browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True)
    context.add_cookies([{"name": "sessionid", "value": console["sessions"]["ann"], "url": console["url"]}])
    ann = context.new_page()
    ann.goto(console["url"] + "/queue/")
    expect(ann.locator("body")).to_have_attribute("data-live", "connected")
    expect(ann.locator("[data-queue] [data-call-row]")).to_have_count(9)
    assert ann.evaluate(OVERLAPS) == []

    row = row_of(ann, "C014")
    row.scroll_into_view_if_needed()
    row.locator(".row-main").tap()
    panel = ann.locator("[data-queue-pane] [data-call-detail]")
    expect(panel).to_contain_text("C014")
    approve = panel.get_by_role("button", name="Approve", exact=True)
    expect(approve).to_be_in_viewport()
    box = approve.bounding_box()
    assert box["y"] + box["height"] <= PHONE["height"] and box["x"] + box["width"] <= PHONE["width"]
    assert ann.evaluate(OVERFLOWING) == []
    SHOTS.mkdir(parents=True, exist_ok=True)
    ann.screenshot(path=SHOTS / "queue-390-open.png")

    approve.tap()
    assert "Customer C014" in client.text()
    expect(row_of(ann, "C014")).to_have_count(0)
    context.close()


def hold_lookups(count):
    """`count` pending calls to the demo's lookup, made in-process by two clients (each has a cap of pending calls)."""
    tool = Tool.objects.get(exposed_name=LOOKUP)
    contexts = [
        ClientContext(credentials.create_token(name)[0], revisions.MODERN, "2026-07-28")
        for name in ("busy agent", "other agent")
    ]
    return [
        lifecycle.receive_call(contexts[n % 2], tool, {"customer_id": f"C{n:03d}"}, n, None)[0]
        for n in range(1, count + 1)
    ]


def test_it_shows_a_busy_queue_compactly_and_nothing_runs_off_the_side(console, open_browser, tmp_path, settings):
    held = hold_lookups(30)
    shown = min(30, settings.QUEUE_PAGE_SIZE)
    assert len(held) == 30 and all(call.status == "pending" for call in held)
    shots = tmp_path / "screenshots"
    browser = open_browser()
    ann = queue_page(browser, console, "ann")
    for width, height in ((1440, 900), (1280, 800)):
        ann.set_viewport_size({"width": width, "height": height})
        ann.goto(console["url"] + "/queue/")
        expect(row_of(ann)).to_have_count(shown)
        pick(ann, "C002")
        ann.evaluate("window.scrollTo(0, 0)")
        if width == 1440:
            assert ann.evaluate(VISIBLE_ROWS) >= 12
        assert ann.evaluate(OVERFLOWING) == []
        ann.screenshot(path=shots / f"queue-{width}x{height}.png")
        ann.goto(f"{console['url']}/calls/{held[1].pk}/")
        assert ann.evaluate(OVERFLOWING) == []
        ann.screenshot(path=shots / f"call-{width}x{height}.png", full_page=True)
    assert len(list(shots.iterdir())) == 4
