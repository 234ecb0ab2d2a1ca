"""An admin creates a token on the Connect page and copies a snippet holding it, in Chromium."""

import pytest
from playwright.sync_api import expect

from approvals.tokens import credentials
from tests.fixtures.people import PASSWORD

pytestmark = pytest.mark.browser


def test_it_creates_a_token_for_the_snippets_and_copies_one(live_console, admin, open_browser):
    context = open_browser().new_context(viewport={"width": 1366, "height": 860})
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_console)
    page = context.new_page()
    problems = []
    page.on("console", lambda message: message.type == "error" and problems.append(message.text))
    page.on("pageerror", lambda error: problems.append(str(error)))

    page.goto(live_console + "/connect/")
    page.get_by_label("Username").fill(admin)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Connect a client")).to_be_visible()
    expect(page.locator("#endpoint")).to_have_text(f"{live_console}/mcp")

    page.get_by_label("Name").fill("ada-laptop")
    page.get_by_role("button", name="Create a token for this").click()
    secret = page.locator("#secret").inner_text().strip()
    assert secret.startswith(credentials.PREFIX)
    expect(page.locator("#snippet-environment")).to_have_text(f"export APPROVAL_CONSOLE_TOKEN={secret}")
    expect(page.locator("#snippet-cursor")).to_contain_text("Bearer ${env:APPROVAL_CONSOLE_TOKEN}")

    copy = page.locator('button[data-copy="snippet-claude-code"]')
    expect(copy).to_be_visible()
    copy.click()
    expect(copy).to_have_text("Copied")
    pasted = page.evaluate("navigator.clipboard.readText()")
    header = "--header 'Authorization: Bearer ${APPROVAL_CONSOLE_TOKEN}'"
    assert pasted == f"claude mcp add --transport http approval-console {live_console}/mcp {header}"

    page.goto(live_console + "/connect/")
    # Reloaded, the page holds no secret: Cursor, which signs in by OAuth, gets the URL alone.
    expect(page.locator("#snippet-cursor")).to_contain_text(f'"url": "{live_console}/mcp"')
    expect(page.locator("#snippet-cursor")).not_to_contain_text("Bearer")
    assert secret not in page.content()
    assert problems == []
