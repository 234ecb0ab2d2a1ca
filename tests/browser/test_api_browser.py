"""An operator makes an API key on their own page and reads the API's document page, in Chromium."""

import pytest
from playwright.sync_api import expect

from approvals.api import keys
from tests.browser.test_tokens_browser import in_thread
from tests.fixtures.people import PASSWORD, make_user

pytestmark = pytest.mark.browser


def test_it_makes_a_key_and_renders_the_api_document_from_the_console_alone(live_console, open_page):
    make_user("ann", "operator")
    page = open_page()
    problems, origins = [], set()
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.on("console", lambda message: problems.append(message.text) if "Refused" in message.text else None)
    page.on("request", lambda request: origins.add(request.url.split("/")[2]))
    page.goto(live_console + "/queue/")
    page.get_by_label("Username").fill("ann")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()

    page.get_by_role("link", name="ann").click()
    page.get_by_label("Name of a new key").fill("triage bot")
    page.get_by_role("button", name="Create a key").click()
    secret = page.locator("#secret").inner_text().strip()
    page.get_by_role("link", name="JSON API").click()

    expect(page.locator(".swagger-ui .info .title")).to_contain_text("MCP Approval Console API")
    expect(page.locator(".opblock-summary-path").filter(has_text="/api/v1/calls/{call_id}/decision")).to_be_visible()
    assert in_thread(lambda: keys.user_of(secret).username) == "ann"
    assert problems == []
    assert origins == {live_console.split("/")[2]}
