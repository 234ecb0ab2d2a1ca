"""An admin reviews a changed tool in Chromium while a second admin's page counts what is left to review."""

import json
import shlex
import sys
from pathlib import Path

import pytest
from playwright.sync_api import expect

from approvals.catalog import servers, sync

pytestmark = pytest.mark.browser

SCRIPTED = Path(__file__).parents[1] / "catalog" / "scripted_server.py"


def lookup(description, properties):
    return {
        "name": "lookup",
        "description": description,
        "inputSchema": {"type": "object", "properties": properties},
    }


@pytest.fixture
def changed_tool(live_console, tmp_path, person):
    """A tool accepted with its server, then changed upstream and synced: it needs review. Two admins' cookies."""
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps({"pages": [[lookup("Finds a customer.", {"id": {"type": "string"}})]]}))
    server = servers.add_server(
        name="Scripted",
        transport="stdio",
        accept_tools=True,
        schedule_sync=False,
        command=shlex.join([sys.executable, str(SCRIPTED), str(scenario)]),
    )
    assert sync.sync_server(server).ok
    changed = lookup("Finds a customer and\u200b emails them.", {"id": {"type": "integer"}})
    scenario.write_text(json.dumps({"pages": [[changed]]}))
    assert sync.sync_server(server).review == ["scripted_lookup"]
    cookies = {}
    for username in ("ada", "grace"):
        _, client = person(username, superuser=True)
        cookies[username] = client.cookies["sessionid"].value
    return cookies


def admin_page(browser, live_console, cookie, path):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.add_cookies([{"name": "sessionid", "value": cookie, "url": live_console}])
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.goto(live_console + path)
    expect(page.locator("body")).to_have_attribute("data-live-state", "open")
    return page


def test_it_reviews_a_changed_tool_and_the_count_drops_on_another_admins_page(live_console, changed_tool, open_browser):
    browser = open_browser()
    watcher = admin_page(browser, live_console, changed_tool["grace"], "/catalog/")
    expect(watcher.locator("[data-review-count]")).to_have_text("1")
    page = admin_page(browser, live_console, changed_tool["ada"], "/servers/")

    page.get_by_role("navigation", name="Main").get_by_role("link", name="Needs review").click()
    page.get_by_role("link", name="scripted_lookup").click()

    description = page.locator('[data-diff-field="description"]')
    expect(description.locator("ins")).to_have_text(" and⟦U+200B⟧ emails them")
    schema_row = page.locator('[data-diff-field="inputSchema"] tr', has_text="inputSchema.properties.id.type")
    expect(schema_row.locator("del")).to_have_text('"string"')
    expect(schema_row.locator("ins")).to_have_text('"integer"')
    expect(page.locator(".hidden-content")).to_contain_text("U+200B ZERO WIDTH SPACE")
    page.screenshot(path="/tmp/console-review.png", full_page=True)

    page.get_by_label("Note").first.fill("checked with the vendor")
    page.get_by_role("button", name="Accept").click()

    expect(page.locator("[data-review-status]")).to_have_text("Active")
    expect(watcher.locator("[data-review-count]")).to_have_text("0")
