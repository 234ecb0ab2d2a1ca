"""An auditor opens the report from the audit page and sees the last day's charts and tables, in Chromium."""

import pytest
from playwright.sync_api import expect

from approvals import roles
from approvals.calls import deciding, lifecycle
from approvals.protocol import revisions
from approvals.tokens.context import ClientContext
from tests.browser.conftest import go_to
from tests.fixtures.people import PASSWORD, make_user

pytestmark = pytest.mark.browser


@pytest.fixture
def decided_today(live_console, client_token, refund_tool, operators):
    ann, bob = operators
    ctx = ClientContext(client_token, revisions.MODERN, "2026-07-28")
    for number, approve in ((1, True), (2, True), (3, False)):
        call, _ = lifecycle.receive_call(ctx, refund_tool, {"order_id": number, "amount": 200}, number, None)
        deciding.decide(call.pk, ann if approve else bob, approve, "" if approve else "over budget")
    make_user("audrey", roles.AUDITOR)


def test_it_shows_an_auditor_the_last_days_report_with_its_charts(live_console, decided_today, open_page):
    page = open_page()
    problems = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.on("console", lambda message: message.type == "error" and problems.append(message.text))
    page.goto(live_console + "/login/")
    page.get_by_label("Username").fill("audrey")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    go_to(page, "Audit")
    page.get_by_role("link", name="Open the report").click()

    expect(page.get_by_role("heading", name="Audit report")).to_be_visible()
    outcome = page.get_by_role("img", name="Decisions by outcome")
    expect(outcome).to_be_visible()
    expect(outcome.locator("rect")).to_have_count(2)
    # Approved and denied each in a colour of its own.
    fills = outcome.locator("rect").evaluate_all("rects => rects.map(rect => getComputedStyle(rect).fill)")
    assert len(set(fills)) == 2
    expect(outcome).to_contain_text("approved")
    expect(page.get_by_role("img", name="Decisions by operator")).to_contain_text("bob")
    expect(page.get_by_role("img", name="Approval latency by tool").locator("rect")).to_have_count(4)
    box = outcome.bounding_box()
    assert box["width"] > 200 and box["height"] > 20
    expect(page.locator("table").first).to_contain_text("shop_issue_refund")
    assert not problems
