"""An admin at 1440x900 and 1280x800 makes rules that take effect: one saved from the form goes before the catch-all and
decides the next call it matches; one made from a held call decides that call and the next alike."""

import pytest
from playwright.sync_api import expect

from approvals import roles
from approvals.policy import rules
from tests.browser.queue_pages import LOOKUP, ClientCall, console, pick, row_of  # noqa: F401

pytestmark = pytest.mark.browser
VIEWPORTS = [{"width": 1440, "height": 900}, {"width": 1280, "height": 800}]


@pytest.fixture(params=VIEWPORTS, ids=lambda size: f"{size['width']}x{size['height']}")
def viewport(request):
    return request.param


def admin_page(open_browser, console, person, viewport):  # noqa: F811
    """Ada's page; her session is made before Chromium opens (Django refuses the ORM once Playwright runs)."""
    _, admin = person("ada", roles.ADMIN)
    context = open_browser().new_context(viewport=viewport)
    context.add_cookies([{"name": "sessionid", "value": admin.cookies["sessionid"].value, "url": console["url"]}])
    page = context.new_page()
    page.set_default_timeout(15_000)
    return page


@pytest.fixture
def catch_all(console):  # noqa: F811
    rules.create_rule(rules.RuleRequest("ask", name="ask everything"))
    return console


def test_it_places_a_no_exports_rule_before_the_catch_all_and_it_decides_the_next_export(
    catch_all, open_browser, person, viewport
):
    page = admin_page(open_browser, catch_all, person, viewport)
    page.goto(catch_all["url"] + "/policy/rules/new/")
    page.get_by_label("Name", exact=True).fill("no exports")
    page.get_by_label("Deny").check()
    page.get_by_label("Tools").fill("*export*")
    page.get_by_role("button", name="Check placement").click()
    expect(page.locator("[data-placing]")).to_contain_text("above ask everything")
    expect(page.get_by_label("Position")).to_have_value("1")
    page.get_by_role("button", name="Add rule").click()
    expect(page.locator("table.rules tbody tr").first).to_have_attribute("data-rule", "no exports")

    answer = ClientCall(catch_all["mcp"], catch_all["secret"], "demo_export_report", {"report": "orders"}).answer()
    assert answer.is_error

    page.goto(catch_all["url"] + "/policy/rules/new/")
    page.get_by_label("Name", exact=True).fill("demo is fine")
    page.get_by_label("Allow").check()
    page.get_by_label("Tools").fill("demo_*")
    page.get_by_role("button", name="Add rule").click()
    partly = "calls to demo_* matching *export*: no exports at position 1 takes them first"
    expect(page.locator(".message.warning")).to_contain_text(partly)
    page.locator('tr[data-rule="demo is fine"]').get_by_role("link", name="demo is fine").click()
    expect(page.locator("[data-partly-covered]")).to_contain_text("no exports")


def test_it_adds_a_rule_for_the_tool_from_a_held_call_and_approves_it_and_the_next_alike(
    catch_all, open_browser, person, viewport
):
    page = admin_page(open_browser, catch_all, person, viewport)
    page.goto(catch_all["url"] + "/queue/")
    expect(page.locator("body")).to_have_attribute("data-live", "connected")
    first = ClientCall(catch_all["mcp"], catch_all["secret"], LOOKUP, {"customer_id": "C010"})
    expect(row_of(page)).to_be_visible()
    pick(page).get_by_role("link", name="Always allow calls like this").click()
    expect(page.get_by_label(f"This tool: every call to {LOOKUP}")).to_be_checked()
    page.get_by_role("button", name="Preview").click()
    expect(page.locator("[data-preview]")).to_contain_text("above ask everything")
    page.get_by_role("button", name="Add rule and approve").click()
    expect(page.locator(".message.success")).to_contain_text(f"allow {LOOKUP}")
    assert "Customer C010" in first.text()

    assert "Customer C011" in ClientCall(catch_all["mcp"], catch_all["secret"], LOOKUP, {"customer_id": "C011"}).text()
