"""The queue as the browser tests drive it: a real MCP client's call, the console with its demo server and two
operators, an operator's queue page, and the rows and panel on it."""

import asyncio
import re
import threading

import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from playwright.sync_api import expect

from approvals import roles
from approvals.demo import COMMAND_LINE
from approvals.tokens import credentials

LOOKUP = "demo_lookup_customer"
# A little longer than the page's dwell (console.js): a decision key acts only on a call selected this long.
DWELL_MS = 500


class ClientCall:
    """One tools/call made with the official SDK client in a thread of its own, as an agent would.

    `ask`, given the client, asks something else instead (a resource read, a prompt).
    """

    def __init__(self, mcp_url, secret, name, arguments, ask=None):
        self.result = self.error = None
        ask = ask or (lambda client: client.call_tool(name, arguments))
        self.thread = threading.Thread(target=self.run, args=(mcp_url, secret, ask), daemon=True)
        self.thread.start()

    def run(self, mcp_url, secret, ask):
        async def call():
            http = create_mcp_http_client(headers={"Authorization": f"Bearer {secret}"})
            async with Client(streamable_http_client(mcp_url, http_client=http)) as client:
                return await ask(client)

        try:
            self.result = asyncio.run(call())
        except Exception as exc:  # the assertion below reports it
            self.error = exc

    def answer(self, timeout=30):
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "the client got no answer"
        assert self.error is None, repr(self.error)
        return self.result

    def text(self, timeout=30):
        return " ".join(block.text for block in self.answer(timeout).content if block.type == "text")


@pytest.fixture
def console(live_console, transactional_db, person, add_fixed_server):
    """The demo server synced, a client token, and the session cookies of operators ann and bob."""
    add_fixed_server("Demo", transport="stdio", command=COMMAND_LINE)
    _, secret = credentials.create_token("browser agent")
    sessions = {}
    for username in ("ann", "bob"):
        _, browser_client = person(username, roles.OPERATOR)
        sessions[username] = browser_client.cookies["sessionid"].value
    return {"url": live_console, "mcp": live_console + "/mcp", "secret": secret, "sessions": sessions}


def one_operator_console(live_console, person, token_name) -> dict:
    """The console as a test with one client token and one operator, ann, sees it."""
    _, secret = credentials.create_token(token_name)
    _, browser_client = person("ann", roles.OPERATOR)
    sessions = {"ann": browser_client.cookies["sessionid"].value}
    return {"url": live_console, "mcp": live_console + "/mcp", "secret": secret, "sessions": sessions}


def queue_page(browser, console, username):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.add_cookies([{"name": "sessionid", "value": console["sessions"][username], "url": console["url"]}])
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.goto(console["url"] + "/queue/")
    expect(page.locator("body")).to_have_attribute("data-live", "connected")
    return page


def row_of(page, tool=LOOKUP):
    return page.locator("[data-queue] [data-call-row]", has_text=tool)


def pick(page, tool=LOOKUP):
    """Select the call whose row shows `tool` (a name or an argument) with a click: the pane then shows it whole."""
    row = row_of(page, tool)
    row.locator(".row-main").click()
    expect(row).to_have_class(re.compile(r"\bselected\b"))
    return page.locator("[data-queue-pane] [data-call-detail]")


def left_queue(page):
    return page.locator("[data-queue-log]")
