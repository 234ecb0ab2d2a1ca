"""A resource read an ask rule holds waits in the queue, shown by its URI; an operator approves it in Chromium."""

import re

import pytest
from playwright.sync_api import expect

from approvals.calls.models import Call
from approvals.policy import rules
from tests.browser.queue_pages import ClientCall, one_operator_console, pick, queue_page
from tests.browser.test_tokens_browser import in_thread

pytestmark = pytest.mark.browser


@pytest.fixture
def console(live_console, surface_server, person):
    """Reads of notes:// on the surface server wait for an operator; a token for the client; operator ann."""
    rules.create_rule(
        rules.RuleRequest("ask", applies_to="resource", tool_glob="notes://*", server="surface", name="notes asked")
    )
    return one_operator_console(live_console, person, "reader")


def test_an_operator_approves_a_held_read_and_the_client_gets_the_contents(console, open_browser):
    ann = queue_page(open_browser(), console, "ann")
    reader = ClientCall(console["mcp"], console["secret"], None, None, ask=lambda c: c.read_resource("notes://n/4"))

    row = ann.locator("[data-queue] [data-call-row]", has_text="notes://n/4")
    expect(row.locator(".row-line [data-kind]")).to_have_text("read")
    detail = pick(ann, "notes://n/4")
    expect(detail.locator("[data-kind]")).to_have_text("resource read")
    expect(detail.locator("[data-uri]")).to_have_text("notes://n/4")
    expect(detail).to_contain_text("notes asked")
    expect(detail.get_by_role("link", name="Edit then approve")).to_have_count(0)
    detail.get_by_role("button", name="Approve", exact=True).click()
    expect(row).to_have_count(0)
    expect(ann.locator("[data-queue-log]")).to_contain_text(re.compile("approved", re.IGNORECASE))

    assert reader.answer().contents[0].text == "note 4"
    call = in_thread(Call.objects.get)
    assert (call.kind, call.status, call.decided_by_name) == ("resource", "completed", "ann")
