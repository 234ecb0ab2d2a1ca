"""The conformance adapter's part as an admin connecting a server that requires OAuth (console_driver.py).

The suite's mock authorization endpoints consent at once: they redirect straight to the redirect_uri with a
code. So the admin's browser is an HTTP GET of the console's authorization URL, whose redirect is followed
to the console's callback, which exchanges the code and syncs the server in the console's own process. The flow
is started as connect_server starts one, so the browser signs in to the console as an admin first: the callback
takes such a flow from no other.
"""

import json
import secrets

import httpx
from django.contrib.auth import get_user_model

from approvals.catalog.models import Server
from approvals.upstream_oauth.connecting import ConnectError, start_connect

# How many times the stand-in admin presses Connect for one server: the console's own retry limit must stop
# a server that keeps refusing before this does (auth/scope-retry-limit counts the authorization requests).
MAX_CONNECTS = 4
# Where the suite expects a client's Client ID Metadata Document (auth/basic-cimd): the console is told its
# document is published there, as a deployment that serves it from another host would be.
SUITE_CIMD_URL = "https://conformance-test.local/client-metadata.json"
ADMIN = "conformance-admin"


def context(given: str) -> dict:
    """What the scenario hands its client (MCP_CONFORMANCE_CONTEXT): pre-registered or client-credentials
    credentials, if any."""
    try:
        value = json.loads(given or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def server_options(scenario: str, given: dict) -> dict:
    """add_server's OAuth arguments for this scenario, from its context."""
    if not given.get("client_id"):
        return {}
    options = {"client_id": given["client_id"], "client_secret": given.get("client_secret", "")}
    options["private_key"] = given.get("private_key_pem", "")
    if scenario.startswith("auth/client-credentials"):
        options["oauth"] = Server.OAuth.CLIENT_CREDENTIALS
    return options


def console_base(console_mcp_url: str) -> str:
    return console_mcp_url.rsplit("/mcp", 1)[0]


def signed_in_admin(browser: httpx.Client, base_url: str) -> None:
    """Signs the browser in to the console through its sign-in form, as an admin made for it."""
    users, password = get_user_model().objects, secrets.token_urlsafe(16)
    admin = users.filter(username=ADMIN).first() or users.create_superuser(ADMIN)
    admin.set_password(password)
    admin.save()
    browser.get(f"{base_url}/login/")
    form = {"username": ADMIN, "password": password, "csrfmiddlewaretoken": browser.cookies["csrftoken"]}
    browser.post(f"{base_url}/login/", data=form, headers={"Referer": f"{base_url}/login/"})


def connect(server, base_url: str) -> str:
    """Press Connect once and let the browser come back: the console's callback page, as text."""
    try:
        url = start_connect(server, base_url=base_url)
    except ConnectError as exc:
        return f"Connect failed: {exc}"
    with httpx.Client(timeout=25.0, follow_redirects=False) as browser:
        signed_in_admin(browser, base_url)
        answer = browser.get(url)
        location = answer.headers.get("location", "")
        if not location.startswith(base_url):
            return f"the authorization endpoint answered {answer.status_code}, not a redirect to the console"
        return browser.get(location).text


def connect_while_needed(server, base_url: str, say) -> None:
    """Connect until the server no longer needs authorization, or MAX_CONNECTS presses."""
    for _ in range(MAX_CONNECTS):
        server.refresh_from_db()
        if server.health != Server.Health.NEEDS_AUTHORIZATION:
            return
        page = connect(server, base_url)
        say("connect:", " ".join(page.split())[:300])


def needs_authorization(text: str) -> bool:
    return "needs authorization" in text
