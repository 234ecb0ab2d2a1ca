"""Single sign-on in Chromium against a real OpenID provider (tests/fixtures/oidc_provider.py), whose accounts
file this test rewrites to move a person between groups."""

import re

import pytest
from playwright.sync_api import expect

from approvals.signin import sso
from tests.browser.conftest import VIEWPORT

pytestmark = [pytest.mark.browser, pytest.mark.node]


def sign_in_with_sso(page, console, login):
    page.goto(f"{console}/queue/")
    page.get_by_role("link", name="Sign in with SSO").click()
    # oidc-provider's development sign-in form, which takes any password.
    page.locator("input[name=login]").fill(login)
    page.locator("input[name=password]").fill("any password")
    page.locator("button[type=submit]").click()


def test_it_signs_an_operator_in_and_shuts_them_out_once_the_provider_moves_them_to_no_group(
    oidc_provider, live_console, open_browser
):
    oidc_provider.put("alice", ["mcp-operators"])
    browser = open_browser()
    queue = browser.new_context(viewport=VIEWPORT).new_page()

    sign_in_with_sso(queue, live_console, "alice")

    expect(queue).to_have_url(f"{live_console}/queue/")
    expect(queue.get_by_role("heading", name="Pending calls")).to_be_visible()
    expect(queue.locator("body")).to_have_attribute("data-live", "connected")

    oidc_provider.put("alice", [])
    # Another browser: one that shared the queue's cookies could show the refusal on the queue's reload instead.
    again = browser.new_context(viewport=VIEWPORT).new_page()
    sign_in_with_sso(again, live_console, "alice")

    expect(again).to_have_url(f"{live_console}/login/")
    expect(again.get_by_text(sso.NO_ROLE)).to_be_visible()
    # The queue's socket closed for want of a role, and its reload found the session ended.
    expect(queue).to_have_url(re.compile(rf"^{re.escape(live_console)}/login/\?next=/queue/"))


def test_it_shows_no_password_form_with_local_login_off_and_still_signs_in_with_sso(
    oidc_provider, live_console, open_page, settings
):
    settings.LOCAL_LOGIN = False
    oidc_provider.put("bob", ["mcp-operators"])
    page = open_page()

    page.goto(f"{live_console}/login/")
    expect(page.get_by_role("link", name="Sign in with SSO")).to_be_visible()
    expect(page.locator("input[name=password]")).to_have_count(0)
    expect(page.get_by_role("button", name="Log in")).to_have_count(0)

    sign_in_with_sso(page, live_console, "bob")
    expect(page).to_have_url(f"{live_console}/queue/")
