"""Each role's pages fit a laptop, in Chromium: at 1280×800 and 1440×900 no element runs past the
viewport's right edge, the navigation keeps to one line, and a screenshot of each page is saved
under pytest's temporary directory; the Admin menu opens by keyboard and without script."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone
from playwright.sync_api import expect

from approvals import roles
from approvals.policy import rules
from approvals.tokens.credentials import create_token
from approvals.webhooks.endpoints import create_endpoint
from tests.browser.conftest import sign_in
from tests.fixtures.catalog import make_server, make_tool
from tests.fixtures.people import make_user

pytestmark = pytest.mark.browser

VIEWPORTS = [(1280, 800), (1440, 900)]
LONG = "Looks a customer's record up by id, email or phone, and returns it with its orders. " * 4

# What lies past the viewport's right edge, or its card's, and is not clipped by an ancestor that scrolls or hides it.
OVERFLOWING = """() => {
  const width = document.documentElement.clientWidth;
  const found = [];
  for (const element of document.body.querySelectorAll("*")) {
    const box = element.getBoundingClientRect();
    const card = element.parentElement && element.parentElement.closest(".card");
    const edge = card ? Math.min(width, card.getBoundingClientRect().right) : width;
    if (!box.width || !box.height || box.right <= edge + 1) continue;
    let clipped = false;
    for (let parent = element.parentElement; parent && parent !== document.body; parent = parent.parentElement) {
      if (getComputedStyle(parent).overflowX !== "visible") { clipped = true; break; }
    }
    if (!clipped) found.push(`${element.tagName.toLowerCase()}.${element.className} ends at ${Math.round(box.right)}`);
  }
  return {found, scrolls: document.documentElement.scrollWidth > width};
}"""
# The tops of the navigation's items: one line when they share one.
NAV_LINES = """() => {
  const nav = document.querySelector("nav.mainnav");
  const tops = new Set([...nav.children].map((item) => Math.round(item.getBoundingClientRect().top)));
  return {lines: tops.size, clipped: nav.scrollWidth > nav.clientWidth};
}"""


@pytest.fixture
def console_data(live_console):
    """A server with long descriptions, rules with one shadowed, a token, a webhook, and a person of each role."""
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
    hook = {"url": "https://hooks.example/console", "events": ["call.pending"], "console_url": live_console}
    webhook, _ = create_endpoint(hook, admin)
    make_user("oscar", roles.OPERATOR)
    make_user("audrey", roles.AUDITOR)
    return {"server": server, "shadowed": shadowed, "token": token, "webhook": webhook}


def pages_of(role, data):
    pages = {
        "catalog": reverse("catalog"),
        "servers": reverse("servers"),
        "server": reverse("server", args=[data["server"].slug]),
        "review": reverse("review"),
        "policy": reverse("rules"),
        "try": reverse("policy_try"),
        "tokens": reverse("tokens"),
        "api-keys": reverse("account"),
        "connect": reverse("connect"),
    }
    if role == "ada":
        pages |= {
            "rule-form": reverse("rule_edit", args=[data["shadowed"].pk]),
            "new-rule": reverse("rule_add"),
            "webhooks": reverse("webhooks"),
            "webhook": reverse("webhook", args=[data["webhook"].pk]),
            "audit": reverse("audit"),
        }
    if role == "audrey":
        pages |= {"audit": reverse("audit"), "audit-report": reverse("audit_report")}
    return pages


@pytest.mark.parametrize("username", ["ada", "oscar", "audrey"])
def test_it_fits_each_page_of_a_role_on_a_laptop_screen(live_console, console_data, open_browser, tmp_path, username):
    pages = pages_of(username, console_data)
    page = open_browser().new_page(viewport={"width": 1280, "height": 800})
    problems = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    sign_in(page, live_console, username)
    for width, height in VIEWPORTS:
        page.set_viewport_size({"width": width, "height": height})
        for name, path in pages.items():
            page.goto(live_console + path)
            overflow = page.evaluate(OVERFLOWING)
            nav = page.evaluate(NAV_LINES)
            page.screenshot(path=tmp_path / f"{username}-{width}x{height}-{name}.png", full_page=True)
            assert overflow == {"found": [], "scrolls": False}, (name, width, overflow)
            assert nav == {"lines": 1, "clipped": False}, (name, width, nav)
    assert problems == []


def test_it_flags_the_shadowed_rule_and_shows_the_verdict_beside_the_try_form(
    live_console, console_data, open_page, tmp_path
):
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
    page.screenshot(path=tmp_path / "rule-form.png", full_page=True)

    tried = f"?token={console_data['token'].pk}&tool=records_delete_customer&arguments={{}}&input=json"
    page.goto(live_console + reverse("policy_try") + tried)
    verdict = page.locator("[data-try-outcome]")
    expect(verdict.locator("[data-decision]")).to_contain_text("allow, by records are fine")
    form = page.locator("form[data-try-form]").bounding_box()
    assert verdict.bounding_box()["y"] < 300 and abs(verdict.bounding_box()["y"] - form["y"]) < 5
    page.screenshot(path=tmp_path / "try.png")


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


def test_it_opens_the_admin_menu_without_script_and_fits_a_phone(live_console, console_data, open_browser, tmp_path):
    page = open_browser().new_page(java_script_enabled=False, viewport={"width": 390, "height": 844})
    sign_in(page, live_console, "ada")
    page.get_by_text("Admin", exact=True).click()
    page.get_by_role("link", name="Policy").click()
    expect(page.get_by_role("heading", name="Policy")).to_be_visible()
    assert page.evaluate("() => document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    page.screenshot(path=tmp_path / "policy-390.png", full_page=True)
