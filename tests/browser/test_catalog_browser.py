"""An admin adds the demo server through the pages, syncs it and reads its catalog, in Chromium."""

import re

import pytest
from playwright.sync_api import expect

from approvals import demo
from tests.browser.conftest import go_to
from tests.fixtures.people import PASSWORD

pytestmark = pytest.mark.browser


def test_it_adds_syncs_and_browses_the_demo_server(live_console, admin, open_page):
    page = open_page()
    problems = []
    page.on("console", lambda message: message.type == "error" and problems.append(message.text))
    page.on("pageerror", lambda error: problems.append(str(error)))

    page.goto(live_console + "/")
    expect(page).to_have_url(re.compile(r"/login/"))
    page.get_by_label("Username").fill(admin)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page).to_have_url(re.compile(r"/queue/"))
    go_to(page, "Servers")
    expect(page.get_by_role("heading", name="Upstream servers")).to_be_visible()

    page.get_by_role("link", name="Add server").click()
    page.get_by_label("Name", exact=True).fill("Demo records")
    page.get_by_label("stdio subprocess").check()
    expect(page.get_by_label("URL")).to_be_hidden()
    page.get_by_label("Command").fill(demo.COMMAND_LINE)
    page.get_by_label("Trusted").check()
    page.get_by_label("Accept its tools now").check()
    page.get_by_role("button", name="Add server").click()
    expect(page.get_by_role("heading", name="Demo records")).to_be_visible()

    page.get_by_role("button", name="Sync now").click()
    expect(page.locator(".message.success")).to_contain_text(re.compile(r"active tools, revision \d{4}-\d\d-\d\d"))
    expect(page.get_by_text("Healthy")).to_be_visible()
    tools = page.locator("table.tools")
    expect(tools.get_by_role("link", name="demo_records_lookup_customer")).to_be_visible()
    expect(tools.get_by_text("Look up a customer")).to_be_visible()

    go_to(page, "Servers")
    row = page.locator("table.list tr", has_text="Demo records")
    expect(row).to_contain_text("Healthy")
    expect(row).to_contain_text(re.compile(r"[1-9]\d* active"))

    go_to(page, "Catalog")
    expect(page.get_by_role("link", name="demo_records_lookup_customer")).to_be_visible()
    expect(page.get_by_role("link", name="demo_records_delete_record")).to_be_visible()
    expect(page.get_by_text("Price an order", exact=True)).to_be_visible()

    page.get_by_role("link", name="demo_records_quote_order").click()
    expect(page.get_by_role("heading", name="Input schema")).to_be_visible()
    expect(page.get_by_role("heading", name="Output schema")).to_be_visible()
    schema = page.locator("table.schema").first
    expect(schema.get_by_role("columnheader", name="Required")).to_be_visible()
    expect(schema.locator("td.prop").first).to_be_visible()

    assert problems == [], problems
