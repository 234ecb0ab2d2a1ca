"""The console as the OAuth client of an upstream that accepts nothing else (tests/servers/oauth_upstream.py).

An admin presses Connect in Chromium and approves on the upstream's own consent page; calls then go upstream with
the token, a token the upstream stops taking is refreshed without anyone, and a refused refresh puts the server
back in "needs authorization" (the admins' banner, the webhook event) until an admin connects again. Per person,
each token's owner connects an account of their own on their account page, and the upstream sees each caller's
own token.
"""

import re
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from django.utils import timezone
from playwright.sync_api import expect

from approvals import roles
from approvals.actions import servers
from approvals.catalog import sync
from approvals.catalog.models import Server
from approvals.policy.models import PolicyRule
from approvals.protocol.headers import request_headers
from approvals.tokens.credentials import create_token
from approvals.upstream_oauth.models import UpstreamGrant
from approvals.upstream_oauth.server_tokens import renew_at
from approvals.webhooks import endpoints
from tests.fixtures.gateway import MODERN, modern_envelope
from tests.fixtures.people import PASSWORD, make_user
from tests.fixtures.waiting import wait_until
from tests.webhooks.receiver import Receiver

pytestmark = pytest.mark.browser

WHOAMI = "files_whoami"


def add_files_server(url, **fields) -> Server:
    """The upstream added as an admin adds it: its first sync meets the 401 and leaves it needing authorization."""
    server = servers.add_server(
        name="Files", transport="http", url=url, tool_prefix="files_", schedule_sync=False, accept_tools=True
    )
    Server.objects.filter(pk=server.pk).update(**fields)
    sync.sync_server(server)
    PolicyRule.objects.create(name="let the test's calls through", action=PolicyRule.Action.ALLOW, tool_glob="*")
    return Server.objects.get(pk=server.pk)


def in_thread(read):
    """Runs an ORM read off this thread, where Playwright's sync API makes Django refuse the database."""
    with ThreadPoolExecutor(1) as executor:
        return executor.submit(read).result()


def ask(console: str, secret: str, method: str, **params) -> httpx.Response:
    """A 2026-07-28 client's request through the console's /mcp, answered as JSON."""
    headers = {
        **request_headers(MODERN, method, params),
        "Authorization": f"Bearer {secret}",
        "Accept": "application/json",
    }
    if method == "tools/call":
        headers["Mcp-Name"] = params["name"]
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": modern_envelope(**params)}
    return httpx.post(f"{console}/mcp", json=body, headers=headers, timeout=60)


def call_tool(console: str, secret: str, name: str) -> dict:
    """The CallToolResult of a tools/call through the console."""
    response = ask(console, secret, "tools/call", name=name, arguments={})
    assert response.status_code == 200, response.text
    return response.json()["result"]


def text_of(result: dict) -> str:
    return result["content"][0]["text"]


def sign_in(page, console: str, username: str):
    page.goto(console + "/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page).not_to_have_url(re.compile(r"/login/"))


def consent(page, account: str):
    """On the upstream's own consent page: which of its accounts consents, and Approve."""
    expect(page.get_by_role("heading", name=re.compile(r"^Authorize"))).to_be_visible()
    page.get_by_label("Account").fill(account)
    page.get_by_role("button", name="Approve").click()
    expect(page.locator("[data-connect-outcome=connected]")).to_be_visible()


def connect_as_admin(page, console: str, server: Server, account: str):
    page.goto(f"{console}/servers/{server.slug}/")
    page.get_by_role("button", name="Connect", exact=True).click()
    consent(page, account)


def test_it_connects_refreshes_and_asks_again_once_the_upstream_refuses(live_console, admin, open_page, oauth_upstream):
    upstream = oauth_upstream()
    server = add_files_server(upstream.url)
    assert server.health == Server.Health.NEEDS_AUTHORIZATION
    receiver = Receiver()
    endpoints.create_endpoint(
        {
            "url": receiver.url,
            "description": "",
            "events": ["server.needs_authorization"],
            "slack": False,
            "enabled": True,
            "console_url": live_console,
        },
        make_user("hook-admin", superuser=True),
    )
    secret = create_token("agent")[1]
    page = open_page()

    sign_in(page, live_console, admin)
    expect(page.locator("[data-needs-authorization]")).to_contain_text("Files")
    connect_as_admin(page, live_console, server, "ada@files")
    page.goto(live_console + "/servers/")
    expect(page.locator("[data-needs-authorization]")).to_have_count(0)

    assert text_of(call_tool(live_console, secret, WHOAMI)) == "account: ada@files"
    (by_code,) = upstream.issued()
    assert by_code["grant"] == "authorization_code"
    assert upstream.calls()[-1]["access_token"] == by_code["access_token"]

    # The upstream stops taking the access token: the console refreshes and runs the call, asking nobody.
    assert upstream.expire("ada@files") == 1
    assert text_of(call_tool(live_console, secret, WHOAMI)) == "account: ada@files"
    by_refresh = upstream.issued()[-1]
    assert by_refresh["grant"] == "refresh_token"
    assert upstream.calls()[-1]["access_token"] == by_refresh["access_token"]

    # The upstream withdraws the console's access: only a person can mend that.
    upstream.revoke("ada@files")
    refused = call_tool(live_console, secret, WHOAMI)
    assert refused["isError"] is True
    assert "needs authorization" in text_of(refused)
    assert f"/servers/{server.slug}/" in text_of(refused)
    assert in_thread(lambda: Server.objects.get(pk=server.pk).health) == Server.Health.NEEDS_AUTHORIZATION
    page.goto(live_console + "/queue/")
    expect(page.locator("[data-needs-authorization]")).to_contain_text("Files")
    (hook,) = receiver.received(1)
    assert b'"server.needs_authorization"' in hook[1]

    connect_as_admin(page, live_console, server, "ada@files")
    assert text_of(call_tool(live_console, secret, WHOAMI)) == "account: ada@files"
    assert upstream.calls()[-1]["access_token"] == upstream.issued()[-1]["access_token"]
    receiver.close()


def test_it_forwards_each_persons_call_with_their_own_upstream_token(live_console, admin, open_browser, oauth_upstream):
    # Tokens that expire within seconds: each person's is refreshed by time (in the second half of its life)
    # before it is sent, with no one asked.
    upstream = oauth_upstream(access_seconds=5)
    server = add_files_server(upstream.url, connection=Server.Connection.PER_PERSON)
    people = {name: make_user(name, roles.OPERATOR) for name in ("ann", "bob", "cy")}
    secrets = {name: create_token(f"{name}'s agent", user=user, owner=user)[1] for name, user in people.items()}
    browser = open_browser()

    for name in ("ann", "bob"):
        page = browser.new_context().new_page()
        sign_in(page, live_console, name)
        page.goto(live_console + "/account/")
        row = page.locator(f"[data-connection={server.slug}]")
        expect(row).to_contain_text("not connected")
        row.get_by_role("button", name="Connect", exact=True).click()
        consent(page, f"{name}@files")
        page.get_by_role("link", name="Back to your account").click()
        expect(page.locator(f"[data-connection={server.slug}]")).to_contain_text("connected since")

    grants = UpstreamGrant.objects.filter(server=server, user__in=[people["ann"], people["bob"]])
    wait_until(lambda: in_thread(lambda: all(renew_at(grant) <= timezone.now() for grant in grants)))
    assert text_of(call_tool(live_console, secrets["ann"], WHOAMI)) == "account: ann@files"
    assert text_of(call_tool(live_console, secrets["bob"], WHOAMI)) == "account: bob@files"
    issued = {issue["access_token"]: issue for issue in upstream.issued()}
    ann_call, bob_call = upstream.calls()[-2:]
    assert (issued[ann_call["access_token"]]["account"], issued[bob_call["access_token"]]["account"]) == (
        "ann@files",
        "bob@files",
    )
    assert issued[ann_call["access_token"]]["grant"] == issued[bob_call["access_token"]]["grant"] == "refresh_token"

    read = ask(live_console, secrets["bob"], "resources/read", uri="profile://me").json()["result"]
    assert read["contents"][0]["text"] == "account: bob@files"
    issued = {issue["access_token"]: issue for issue in upstream.issued()}
    assert issued[upstream.calls()[-1]["access_token"]]["account"] == "bob@files"

    refused = call_tool(live_console, secrets["cy"], WHOAMI)
    assert refused["isError"] is True
    assert "/account/" in text_of(refused)
    unread = ask(live_console, secrets["cy"], "resources/read", uri="profile://me").json()["error"]
    assert "/account/" in unread["message"]
    assert len(upstream.calls()) == 3
