"""add_server's OAuth flags and connect_server, against the scripted authorization server."""

from io import StringIO
from urllib.parse import parse_qs, urlsplit

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from django.core.management import CommandError, call_command

from approvals.catalog import sync
from approvals.catalog.models import Server
from approvals.management.commands import connect_server
from approvals.upstream import AuthorizationRequired
from approvals.upstream.spec import ServerIdentity
from approvals.upstream_oauth import server_tokens
from approvals.upstream_oauth.connecting import finish_connect
from approvals.upstream_oauth.models import UpstreamClient, UpstreamGrant
from tests.fixtures.catalog import make_server
from tests.upstream_oauth.oauth_server import AS, MCP, PRM, ScriptedAuthServer, bearer, returning_admin


def run(*args) -> list[str]:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue().splitlines()


@pytest.fixture
def auth_server(monkeypatch, settings):
    settings.CONSOLE_URL = "https://console.test"
    monkeypatch.setattr(sync, "sync_server", lambda server: sync.SyncReport(server.name, ok=True))
    return ScriptedAuthServer().install(monkeypatch)


def test_add_server_keeps_the_oauth_settings_and_seals_what_is_secret(db, tmp_path):
    key = tmp_path / "key.pem"
    private = ec.generate_private_key(ec.SECP256R1())
    key.write_bytes(
        private.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    run(
        "add_server",
        "Billing",
        "--url",
        MCP,
        "--client-id",
        "m2m",
        "--client-credentials",
        "--private-key-file",
        str(key),
        "--no-resource-indicator",
        "--no-sync",
    )
    run(
        "add_server",
        "Wiki",
        "--url",
        "https://wiki.test/mcp",
        "--client-id",
        "wiki-app",
        "--client-secret",
        "s3",
        "--connection",
        "per-person",
        "--no-sync",
    )
    billing, wiki = Server.objects.get(name="Billing"), Server.objects.get(name="Wiki")
    assert (billing.oauth, billing.resource_indicator) == (Server.OAuth.CLIENT_CREDENTIALS, False)
    assert (wiki.oauth, wiki.connection) == (Server.OAuth.AUTHORIZATION_CODE, Server.Connection.PER_PERSON)
    client = UpstreamClient.objects.get(server=billing)
    assert (client.registration, client.token_auth_method) == ("preregistered", "private_key_jwt")
    assert client.private_key.startswith("-----BEGIN PRIVATE KEY-----")
    assert UpstreamClient.objects.get(server=wiki).client_secret == "s3"


@pytest.mark.parametrize(
    "flags, problem",
    [
        (["--client-secret", "s"], "need --client-id"),
        (["--client-id", "c", "--client-credentials"], "needs --client-secret or --private-key-file"),
        (["--client-id", "c", "--private-key-file", "/nonexistent"], "cannot read"),
    ],
)
def test_add_server_says_what_is_wrong_with_its_oauth_flags(db, flags, problem):
    with pytest.raises(CommandError, match=problem):
        run("add_server", "X", "--url", MCP, "--no-sync", *flags)
    assert not Server.objects.exists()


def test_connect_server_prints_the_url_first_waits_for_the_callback_and_syncs(db, auth_server, monkeypatch):
    server = make_server("Tracker", url=MCP)
    server_tokens.challenged(server, {"resource_metadata": PRM}, "HTTP 401")
    auth_server.token_answers.append(bearer("cmd-access"))
    printed, admin = [], returning_admin()

    def browser_comes_back(seconds):
        # What another console process does when the browser reaches its callback.
        state = parse_qs(urlsplit(printed[0]).query)["state"][0]
        finish_connect(state, "code", AS, by=admin)

    monkeypatch.setattr(connect_server.time, "sleep", browser_comes_back)
    out = StringIO()
    out.write = lambda text, write=out.write: (printed.extend(text.splitlines()), write(text))[1]
    call_command("connect_server", "Tracker", "--scope", "issues:admin", stdout=out)
    assert printed[0].startswith(f"{AS}/authorize?") and "scope=issues%3Aadmin" in printed[0]
    assert "redirect_uri=https%3A%2F%2Fconsole.test%2Foauth%2Fupstream%2Fcallback" in printed[0]
    assert printed[1:] == ["connected Tracker", "Tracker: no changes"]
    assert UpstreamGrant.objects.get(server=server).access_token == "cmd-access"


def test_connect_server_connects_a_server_added_with_no_sync_and_its_sync_carries_the_token(
    transactional_db, settings, monkeypatch
):
    """A server added with --no-sync was never answered 401, so nothing yet says it needs OAuth."""
    settings.CONSOLE_URL = "https://console.test"
    auth_server = ScriptedAuthServer().install(monkeypatch)
    auth_server.token_answers.append(bearer("cmd-access"))

    async def tracker_requiring_a_token(spec):
        # What tracker.test answers: its tools to a request carrying the token, else a 401 naming its metadata.
        if spec.authorizer is None or await spec.authorizer.bearer() != "cmd-access":
            raise AuthorizationRequired("HTTP 401", challenge={"resource_metadata": PRM})
        identity = ServerIdentity("2025-06-18", "legacy", {"name": "tracker"}, {"tools": {}}, "")
        return identity, [{"name": "search", "inputSchema": {"type": "object"}}], {}

    monkeypatch.setattr(sync, "fetch_catalog", tracker_requiring_a_token)
    run("add_server", "Tracker", "--url", MCP, "--no-sync")
    monkeypatch.setattr(
        connect_server.time,
        "sleep",
        lambda seconds: finish_connect(parse_qs(urlsplit(urls[-1]).query)["state"][0], "code", AS, by=admin),
    )
    urls, admin = [], returning_admin()
    monkeypatch.setattr(
        connect_server,
        "start_connect",
        lambda *a, start=connect_server.start_connect, **k: urls.append(start(*a, **k)) or urls[-1],
    )
    printed = run("connect_server", "Tracker")
    assert printed[1:] == ["connected Tracker", "Tracker: 1 added, 1 awaiting review"]
    server = Server.objects.get(name="Tracker")
    assert (server.oauth, server.health) == (Server.OAuth.AUTHORIZATION_CODE, Server.Health.OK)
    assert UpstreamGrant.objects.get(server=server).status == UpstreamGrant.Status.CONNECTED


def test_connect_server_exits_with_the_reason_when_no_browser_comes_back_or_it_is_refused(db, auth_server, monkeypatch):
    server = make_server("Tracker", url=MCP)
    server_tokens.challenged(server, {"resource_metadata": PRM}, "HTTP 401")
    with pytest.raises(CommandError, match="no browser came back to the console within 0s"):
        run("connect_server", "Tracker", "--timeout", "0")
    urls, admin = [], returning_admin()
    monkeypatch.setattr(
        connect_server.time,
        "sleep",
        lambda seconds: finish_connect(
            parse_qs(urlsplit(urls[-1]).query)["state"][0], "", None, "access_denied", by=admin
        ),
    )
    monkeypatch.setattr(
        connect_server,
        "start_connect",
        lambda *a, start=connect_server.start_connect, **k: urls.append(start(*a, **k)) or urls[-1],
    )
    with pytest.raises(CommandError, match="was not connected: the authorization server refused: access_denied"):
        run("connect_server", "Tracker")
    with pytest.raises(CommandError, match="no server named"):
        run("connect_server", "Nope")


def test_connect_server_needs_the_consoles_public_address(db, settings):
    settings.CONSOLE_URL = ""
    make_server("Tracker", url=MCP)
    with pytest.raises(CommandError, match="set CONSOLE_URL"):
        run("connect_server", "Tracker")
