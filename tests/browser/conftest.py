"""Browser tests: one Chromium per worker, started by its first browser test, and a fresh context for each test.

Launching Chromium and Playwright's driver costs a second or more; a new context, cookies and storage of its
own, a fraction of that, and isolates a test from the last as well as a new browser would.
"""

import asyncio
import os
import shutil

import pytest

from tests.fixtures.people import PASSWORD, make_user

# The full browser, for what the headless shell has not: notifications, a page's own and a service worker's.
FULL_CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# Chromium's headless shell, where installed: the same engine without the full browser's windows, tabs and
# address bar, which its headless mode still lays out and draws, unseen, on every navigation.
CHROMIUM = shutil.which("chromium-headless-shell") or FULL_CHROMIUM
VIEWPORT = {"width": 1366, "height": 860}
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]


class SharedChromium:
    """This worker's Chromium (and the full one, once a test asks for it) and the Playwright that drives them, lent
    to one test at a time.

    Playwright's sync API runs its event loop in a greenlet of the calling thread, and marks that loop as the
    thread's running one between its calls. Django refuses database access where a loop runs, so the loop is
    marked running only while a test holds the browser, and unmarked when it gives it back: the tests after it
    in this worker, browser tests before their first page included, reach the database as usual.
    """

    def __init__(self):
        self.playwright = self.loop = None
        self.browsers = {}

    def lend(self, executable=CHROMIUM):
        if not os.path.exists(executable):
            pytest.skip(f"Chromium is not installed at {executable} (apt-get install chromium-headless-shell chromium)")
        if self.playwright is None:
            from playwright.sync_api import expect, sync_playwright

            # What a page shows after a push or a redirect comes later on a loaded CI machine than on a quiet one;
            # the assertions wait for it as long as actions do.
            expect.set_options(timeout=15_000)
            self.playwright = sync_playwright().start()
            self.loop = asyncio.get_running_loop()
        else:
            asyncio._set_running_loop(self.loop)
        browser = self.browsers.get(executable)
        if browser is None or not browser.is_connected():
            browser = self.browsers[executable] = self.playwright.chromium.launch(
                executable_path=executable, headless=True, args=LAUNCH_ARGS
            )
        return browser

    def take_back(self):
        if self.playwright is None or asyncio._get_running_loop() is not self.loop:
            return
        for browser in self.browsers.values():
            for context in browser.contexts:
                context.close()
        asyncio._set_running_loop(None)

    def stop(self):
        if self.playwright is None:
            return
        asyncio._set_running_loop(self.loop)
        for browser in self.browsers.values():
            browser.close()
        self.playwright.stop()
        asyncio._set_running_loop(None)


@pytest.fixture(scope="session")
def _chromium():
    shared = SharedChromium()
    yield shared
    shared.stop()


@pytest.fixture
def _browser(_chromium, live_console):
    """The shared Chromium for this test, once it asks; its contexts closed before the database is flushed."""
    yield _chromium.lend
    _chromium.take_back()


@pytest.fixture
def open_page(_browser):
    """Opens a Chromium page, in a context of its own, on its first call; closes it before the database is flushed.

    Call it after any ORM work: while Playwright's sync API lives it marks this thread's
    event loop as running, and Django refuses database access from such a thread.
    """

    def open_one():
        page = _browser().new_page(viewport=VIEWPORT)
        page.set_default_timeout(15_000)
        return page

    return open_one


@pytest.fixture
def open_browser(_browser):
    """Chromium, for tests that need several contexts (several people signed in): each test's are closed after it.

    The same rule as open_page: call it after any ORM work of the test's own thread.
    """
    return _browser


@pytest.fixture
def open_full_browser(_browser):
    """The full Chromium, as open_browser lends the shell: for tests of notifications."""
    return lambda: _browser(FULL_CHROMIUM)


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
