"""The policy pages' flags and layout, in Chromium, and the Admin menu, opened by keyboard and without script.

Every page's fit at laptop widths, for each role, is tests/browser/test_every_page_browser.py's."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone
from playwright.sync_api import expect

from approvals import roles
from approvals.policy import rules
from approvals.tokens.credentials import create_token
from tests.browser.conftest import VIEWPORT, sign_in
from tests.browser.test_every_page_browser import FITS, WIDE
from tests.browser.test_every_page_browser import VIEWPORT as LAPTOP
from tests.fixtures.catalog import make_server, make_tool
from tests.fixtures.people import make_user

pytestmark = pytest.mark.browser

LONG = "Looks a customer's record up by id, email or phone, and returns it with its orders. " * 4


@pytest.fixture
def console_data(live_console):
    """A server with long descriptions, rules with one shadowed, a token, and an admin."""
    server = make_server("Customer records with a long name", tool_prefix="records_")
    for name in ("lookup_customer_by_email_or_phone_number", "update_customer", "delete_customer"):
        make_tool(server, name, description=LONG, title="A customer tool with a rather long title")
    rules.create_rule(rules.RuleRequest("allow", tool_glob="records_*", name="records are fine"))
    shadowed = rules.create_rule(
        rules.RuleRequest(
            "deny",
            tool_glob="records_delete_*",
            name="no deletes",
            conditions=[{"path": "customer.id", "op": "in", "value": ["C1", "C2"]}],
        )
    )
    admin = make_user("ada", roles.ADMIN, is_staff=True)
    token, _ = create_token("support-bot-with-a-long-name", owner=admin, expires_at=timezone.now() + timedelta(days=30))
    return {"server": server, "shadowed": shadowed, "token": token}


def test_it_flags_the_shadowed_rule_and_shows_the_verdict_beside_the_try_form(live_console, console_data, open_page):
    page = open_page()
    sign_in(page, live_console, "ada")
    page.goto(live_console + reverse("rules"))
    flagged = page.locator("[data-shadowed]")
    expect(flagged).to_have_count(1)
    expect(page.locator('tr[data-rule="no deletes"] [data-shadowed]')).to_contain_text("never matches")
    page.get_by_role("link", name="no deletes").click()
    expect(page.locator(".message[data-shadowed]")).to_contain_text("records are fine")
    expect(page.get_by_label("Path", exact=True)).to_have_value("customer.id")
    path_box = page.get_by_label("Path", exact=True).bounding_box()
    assert path_box["width"] > 150, "the condition builder's inputs are full-size"
    # The shadowed rule's message fits the form at laptop widths as every page does (long_rows has no shadowed rule).
    for viewport in (LAPTOP, WIDE):
        page.set_viewport_size(viewport)
        assert page.evaluate(FITS) is None, viewport
    page.set_viewport_size(VIEWPORT)

    tried = f"?token={console_data['token'].pk}&tool=records_delete_customer&arguments={{}}&input=json"
    page.goto(live_console + reverse("policy_try") + tried)
    verdict = page.locator("[data-try-outcome]")
    expect(verdict.locator("[data-decision]")).to_contain_text("allow, by records are fine")
    form = page.locator("form[data-try-form]").bounding_box()
    assert verdict.bounding_box()["y"] < 300 and abs(verdict.bounding_box()["y"] - form["y"]) < 5


def test_it_opens_the_admin_menu_by_keyboard(live_console, console_data, open_page):
    page = open_page()
    sign_in(page, live_console, "ada")
    menu = page.get_by_role("navigation", name="Main").locator("summary", has_text="Admin")
    expect(page.get_by_role("link", name="Webhooks")).to_be_hidden()
    menu.focus()
    page.keyboard.press("Enter")
    expect(page.get_by_role("link", name="Webhooks")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.get_by_role("link", name="Webhooks")).to_be_hidden()
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    expect(page).to_have_url(live_console + reverse("servers"))
    expect(page.locator("summary.current")).to_have_text("Admin")


def test_it_opens_the_admin_menu_without_script_and_fits_a_phone(live_console, console_data, open_browser):
    page = open_browser().new_page(java_script_enabled=False, viewport={"width": 390, "height": 844})
    sign_in(page, live_console, "ada")
    page.get_by_text("Admin", exact=True).click()
    page.get_by_role("link", name="Policy").click()
    expect(page.get_by_role("heading", name="Policy")).to_be_visible()
    assert page.evaluate("() => document.documentElement.scrollWidth <= document.documentElement.clientWidth")
