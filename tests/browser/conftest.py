import os
import shutil
from contextlib import ExitStack

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"]


@pytest.fixture
def open_page(live_console):
    """Opens a Chromium page on its first call and closes it before the database is flushed.

    Call it after any ORM work: while Playwright's sync API lives it marks this thread's
    event loop as running, and Django refuses database access from such a thread.
    """
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"Chromium is not installed at {CHROMIUM} (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with ExitStack() as stack:

        def open_one():
            playwright = stack.enter_context(sync_playwright())
            browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=LAUNCH_ARGS)
            stack.callback(browser.close)
            page = browser.new_page(viewport={"width": 1366, "height": 860})
            page.set_default_timeout(15_000)
            return page

        yield open_one
