"""An admin creates a person on the People page, gives them a role and deactivates them, in Chromium at 1440x900:
the person's browser session, API key, client token and OAuth grant stop working at once."""

import asyncio
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.contrib.auth.models import User
from django.db import connection
from playwright.sync_api import expect

from approvals import roles
from approvals.audit.models import AuditEvent
from approvals.gateway.auth import forget_requests
from approvals.oauth.models import RoleScope
from tests.browser.conftest import go_to, sign_in
from tests.oauth.test_grants_follow_owner import holdings, refused_everywhere, tools_list

pytestmark = pytest.mark.browser

VIEWPORT = {"width": 1440, "height": 900}


def in_thread(work):
    """What `work()` returns, run outside the browser's event loop, where Django refuses database work."""

    def run():
        try:
            return work()
        finally:
            connection.close()

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(run).result()


def answers(held, mcp_url) -> dict:
    access = asyncio.run(tools_list(mcp_url, held.oauth["access_token"]))
    owned = asyncio.run(tools_list(mcp_url, held.client_token))
    # The browser client itself, which holds the session's cookie.
    session = held.browser.get("/queue/").status_code
    return refused_everywhere(held, {"access": access.status_code, "owned": owned.status_code, "session": session})


def test_it_lets_an_admin_create_a_person_give_a_role_and_deactivate_them_ending_everything_at_once(
    live_console, mcp_url, admin, open_browser
):
    forget_requests("oauth-register:127.0.0.1")
    RoleScope.objects.create(role=roles.OPERATOR, tool_globs=["*"])
    browser = open_browser()
    page = browser.new_context(viewport=VIEWPORT).new_page()
    problems = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    sign_in(page, live_console, admin)

    go_to(page, "People")
    page.get_by_label("Username").fill("olivia")
    page.get_by_label("Email").fill("olivia@example.com")
    page.get_by_role("button", name="Create person").click()
    expect(page.get_by_role("heading", name="Created olivia")).to_be_visible()
    password = page.locator("#secret").inner_text().strip()
    row = page.get_by_role("row").filter(has_text="olivia@example.com")
    row.get_by_label("operator").check()
    row.get_by_role("button", name="Save roles").click()
    expect(page.get_by_text("olivia now holds: operator")).to_be_visible()
    assert password not in page.content()

    hers = browser.new_context(viewport=VIEWPORT).new_page()
    hers.goto(live_console + "/login/")
    hers.get_by_label("Username").fill("olivia")
    hers.get_by_label("Password").fill(password)
    hers.get_by_role("button", name="Log in").click()
    expect(hers.get_by_role("navigation", name="Main")).to_be_visible()
    olivia = in_thread(lambda: User.objects.get(username="olivia"))
    held = in_thread(lambda: holdings(live_console, olivia))
    before = in_thread(lambda: answers(held, mcp_url))
    assert (before["api_key"], before["session"], before["access"], before["owned"]) == (200, 200, 200, 200)

    page.reload()
    row = page.get_by_role("row").filter(has_text="olivia@example.com")
    expect(row.locator("[data-held=client_tokens]")).to_have_text("2")
    expect(row.locator("[data-held=oauth_grants]")).to_have_text("1")
    row.get_by_label("Reason (for the audit log)").fill("left the company")
    row.get_by_role("button", name="Deactivate").click()
    expect(page.get_by_text("Deactivated olivia")).to_be_visible()

    assert in_thread(lambda: answers(held, mcp_url)) == {
        "refresh": (400, "invalid_grant"),
        "api_key": 401,
        "session": 302,
        "access": 401,
        "owned": 401,
    }
    hers.goto(live_console + "/queue/")
    expect(hers.get_by_label("Password")).to_be_visible()
    actions = in_thread(lambda: list(AuditEvent.objects.order_by("seq").values_list("action", "actor_name")))
    people = [entry for entry in actions if entry[0].startswith("person.") or entry[0] == "user.access_ended"]
    assert people == [
        ("person.created", admin),
        ("person.roles_changed", admin),
        ("user.access_ended", admin),
        ("person.deactivated", admin),
    ]
    assert problems == []
