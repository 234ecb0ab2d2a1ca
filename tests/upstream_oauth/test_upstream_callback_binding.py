"""The upstream OAuth callback takes a flow only from the browser it belongs to: whoever else holds an
authorization URL cannot tie the server's connection to an upstream account of their own."""

import html
import re

import pytest
from django.test import Client

from approvals import roles
from approvals.catalog import sync
from approvals.catalog.models import Server
from approvals.upstream_oauth import server_tokens
from approvals.upstream_oauth.bearer import bearer_for
from approvals.upstream_oauth.connecting import start_connect
from approvals.upstream_oauth.models import UpstreamAuthorization, UpstreamGrant
from tests.fixtures.catalog import make_server
from tests.fixtures.people import make_user
from tests.upstream_oauth.oauth_server import MCP, PRM, ScriptedAuthServer, bearer

CALLBACK = "/oauth/upstream/callback"


@pytest.fixture
def auth_server(monkeypatch, settings):
    settings.CONSOLE_URL = "https://console.test"
    monkeypatch.setattr(sync, "sync_server", lambda server: sync.SyncReport(server.name, ok=True))
    return ScriptedAuthServer().install(monkeypatch)


@pytest.fixture
def tracker(db):
    server = make_server("Tracker", url=MCP)
    server_tokens.challenged(server, {"resource_metadata": PRM}, "HTTP 401")
    return server


def browser(user=None) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def pressed_connect(client: Client, path: str) -> str:
    """The state of the authorization URL the page sent the browser on to."""
    page = html.unescape(client.post(path).content.decode())
    return re.search(r"[?&]state=([^&\"]+)", page)[1]


def came_back(client: Client, state: str, code: str):
    return client.get(CALLBACK, {"state": state, "code": code})


def test_a_shared_connection_is_finished_only_by_the_admin_session_that_pressed_connect(tracker, auth_server):
    ada = make_user("ada", roles.ADMIN)
    adas_browser = browser(ada)
    state = pressed_connect(adas_browser, f"/servers/{tracker.slug}/connect/")
    auth_server.token_answers.append(bearer("adas-access"))
    # The URL passed on: signed out, another admin, and ada herself in another session, each with their own code.
    for other in (browser(), browser(make_user("eve", roles.ADMIN)), browser(ada)):
        refused = came_back(other, state, "attackers-code")
        assert refused.status_code == 400 and b"started in another browser session" in refused.content
    assert auth_server.forms("/token") == []
    assert UpstreamAuthorization.objects.get().outcome == ""

    assert came_back(adas_browser, state, "adas-code").status_code == 200
    assert [form["code"] for form in auth_server.forms("/token")] == ["adas-code"]
    assert bearer_for(tracker, None) == "adas-access"


def test_a_persons_own_connection_is_finished_only_by_their_own_session(db, auth_server):
    files = make_server("Files", url=MCP, oauth="authorization_code", connection=Server.Connection.PER_PERSON)
    server_tokens.challenged(files, {"resource_metadata": PRM}, "HTTP 401")
    ann, bob = make_user("ann", roles.OPERATOR), make_user("bob", roles.OPERATOR)
    anns_browser = browser(ann)
    state = pressed_connect(anns_browser, f"/account/connections/{files.slug}/connect/")
    assert came_back(browser(bob), state, "bobs-code").status_code == 400
    assert not UpstreamGrant.objects.filter(user__isnull=False).exists()
    auth_server.token_answers.append(bearer("anns-access"))
    assert came_back(anns_browser, state, "anns-code").status_code == 200
    assert UpstreamGrant.objects.get(server=files, user=ann).access_token == "anns-access"


def test_a_flow_connect_server_started_is_finished_only_by_a_signed_in_admin(tracker, auth_server):
    state = re.search(r"[?&]state=([^&]+)", start_connect(tracker, base_url="https://console.test"))[1]
    for other in (browser(), browser(make_user("otto", roles.OPERATOR))):
        refused = came_back(other, state, "attackers-code")
        assert refused.status_code == 400 and b"sign in to the console as an admin" in refused.content
    assert auth_server.forms("/token") == []
    auth_server.token_answers.append(bearer("cli-access"))
    assert came_back(browser(make_user("ada", roles.ADMIN)), state, "adas-code").status_code == 200
    assert bearer_for(tracker, None) == "cli-access"
