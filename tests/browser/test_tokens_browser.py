"""An admin creates, rotates and revokes a client token on the Tokens page, in Chromium."""

from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection
from playwright.sync_api import expect

from approvals.audit.models import AuditEvent
from approvals.tokens import credentials
from approvals.tokens.models import ClientToken
from tests.fixtures.people import PASSWORD

pytestmark = pytest.mark.browser


def in_thread(read):
    """What `read()` returns, run outside the browser's event loop, where Django refuses database work."""

    def run():
        try:
            return read()
        finally:
            connection.close()

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(run).result()


def opens(secret):
    return in_thread(lambda: credentials.authenticate(secret))


def token_changes():
    return in_thread(lambda: list(AuditEvent.objects.filter(action__startswith="token.").order_by("seq")))


def test_it_creates_rotates_and_revokes_a_token_each_change_audited(live_console, admin, open_browser):
    page = open_browser().new_context(viewport={"width": 1366, "height": 860}).new_page()
    problems = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.goto(live_console + "/tokens/")
    page.get_by_label("Username").fill(admin)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()

    page.get_by_role("link", name="New token").click()
    page.get_by_label("Name").fill("ci-agent")
    page.get_by_label("Description").fill("nightly reports")
    page.get_by_label("Expires").fill("2099-01-31")
    page.get_by_label("Requests a minute").fill("60")
    page.get_by_role("button", name="Create token").click()
    first = page.locator("#secret").inner_text().strip()
    assert opens(first).name == "ci-agent"

    page.goto(live_console + "/tokens/")
    row = page.get_by_role("row").filter(has_text="ci-agent")
    expect(row).to_contain_text("nightly reports")
    expect(row).to_contain_text("2099-01-31")
    expect(row).to_contain_text("60/min")
    row.get_by_role("link", name="Rotate…").click()
    page.get_by_label("The old secret keeps working for").select_option("1h")
    page.get_by_role("button", name="Rotate ci-agent").click()
    expect(page.get_by_role("heading", name="Rotated ci-agent")).to_be_visible()
    second = page.locator("#secret").inner_text().strip()
    assert second != first
    assert opens(second) == opens(first) == in_thread(ClientToken.objects.get)

    page.goto(live_console + "/tokens/")
    expect(page.get_by_role("row").filter(has_text="ci-agent")).to_contain_text("old secret valid until")
    page.get_by_role("row").filter(has_text="ci-agent").get_by_role("link", name="Revoke…").click()
    page.get_by_role("button", name="Revoke ci-agent").click()
    expect(page.get_by_text("Revoked ci-agent")).to_be_visible()
    expect(page.get_by_role("row").filter(has_text="ci-agent")).to_contain_text("revoked")
    assert opens(first) is None and opens(second) is None

    changes = token_changes()
    assert [e.action for e in changes] == ["token.created", "token.rotated", "token.revoked"]
    assert all("before" in e.data and "after" in e.data and e.actor_name == admin for e in changes)
    assert problems == []
