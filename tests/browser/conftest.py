import os
import shutil
from contextlib import ExitStack

import pytest

from tests.fixtures.people import PASSWORD, make_user

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
VIEWPORT = {"width": 1366, "height": 860}
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]


def launch(stack):
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"Chromium is not installed at {CHROMIUM} (apt-get install chromium)")
    from playwright.sync_api import expect, sync_playwright

    # What a page shows after a push or a redirect comes later on a loaded CI machine than on a quiet one;
    # the assertions wait for it as long as actions do.
    expect.set_options(timeout=15_000)
    playwright = stack.enter_context(sync_playwright())
    browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=LAUNCH_ARGS)
    stack.callback(browser.close)
    return browser


@pytest.fixture
def open_page(live_console):
    """Opens a Chromium page on its first call and closes it before the database is flushed.

    Call it after any ORM work: while Playwright's sync API lives it marks this thread's
    event loop as running, and Django refuses database access from such a thread.
    """
    with ExitStack() as stack:

        def open_one():
            page = launch(stack).new_page(viewport=VIEWPORT)
            page.set_default_timeout(15_000)
            return page

        yield open_one


@pytest.fixture
def open_browser(live_console):
    """Opens Chromium on its first call, for tests that need several contexts (several people signed in).

    The same rule as open_page: call it after any ORM work of the test's own thread.
    """
    with ExitStack() as stack:
        yield lambda: launch(stack)


@pytest.fixture
def admin(transactional_db):
    """A superuser's name; the password is tests.fixtures.people.PASSWORD."""
    return make_user("ada", superuser=True).username


def go_to(page, name):
    """Follows the main navigation's link of that name, opening the Admin menu first when the link is in it."""
    nav = page.get_by_role("navigation", name="Main")
    link = nav.get_by_role("link", name=name, exact=True)
    if not link.is_visible():
        nav.locator("summary", has_text="Admin").click()
    link.click()


def sign_in(page, base, username):
    """Signs in through the login form, as a person would; done once the main navigation shows."""
    from playwright.sync_api import expect

    page.goto(base + "/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("navigation", name="Main")).to_be_visible()
