"""Connecting a server that requires OAuth, keeping its tokens, and losing them: against a scripted
authorization server (tests/upstream_oauth/oauth_server.py), in process."""

import json
from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

import pytest
from django.db import connection
from django.utils import timezone

from approvals import roles
from approvals.audit.models import AuditEvent
from approvals.catalog import sync
from approvals.catalog.models import Server
from approvals.live import events
from approvals.protocol.oauth_params import challenge_for
from approvals.upstream import UpstreamError
from approvals.upstream_oauth import server_tokens
from approvals.upstream_oauth.bearer import NeedsAuthorization, bearer_for, stepped_up
from approvals.upstream_oauth.connecting import ConnectError, start_connect
from approvals.upstream_oauth.models import UpstreamAuthorization, UpstreamClient, UpstreamGrant
from approvals.webhooks.bodies import slack_text
from approvals.webhooks.models import WebhookDelivery, WebhookEndpoint
from tests.fixtures.catalog import make_server
from tests.fixtures.people import make_user
from tests.upstream_oauth.oauth_server import AS, MCP, PRM, ScriptedAuthServer, bearer

CONSOLE = "https://console.test"
CALLBACK = "/oauth/upstream/callback"


@pytest.fixture
def auth_server(monkeypatch):
    return ScriptedAuthServer().install(monkeypatch)


@pytest.fixture
def client(client, db):
    """The browser that comes back to the callback: an admin's, signed in, as flows without a person need."""
    client.force_login(make_user("root", roles.ADMIN))
    return client


@pytest.fixture
def no_sync(monkeypatch):
    """The callback's sync, which would reach the upstream server itself, is not these tests' concern."""
    monkeypatch.setattr(sync, "sync_server", lambda server: sync.SyncReport(server.name, ok=True))


@pytest.fixture
def tracker(db):
    server = make_server("Tracker", url=MCP)
    server_tokens.challenged(server, {"resource_metadata": PRM, "scope": "issues:read"}, "HTTP 401")
    server.refresh_from_db()
    return server


def query(url: str) -> dict:
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}


def audit_text() -> str:
    return " ".join(str(event.data) for event in AuditEvent.objects.all())


def test_a_server_answering_401_needs_authorization_and_tells_admins_and_webhooks(tracker, client):
    assert (tracker.health, tracker.oauth) == (Server.Health.NEEDS_AUTHORIZATION, Server.OAuth.AUTHORIZATION_CODE)
    assert UpstreamGrant.objects.get(server=tracker, user=None).wanted_scope == "issues:read"
    assert AuditEvent.objects.filter(action="server.needs_authorization", server_id=tracker.pk).count() == 1
    client.force_login(make_user("ada", roles.ADMIN))
    page = client.get(f"/servers/{tracker.slug}/").content.decode()
    assert ">Connect</button>" in page and "data-needs-authorization" in page
    assert "Needs authorization" in page


def test_connect_discovers_registers_and_sends_the_browser_with_pkce_state_resource_and_scope(
    tracker, auth_server, client, no_sync
):
    url = start_connect(tracker, base_url=CONSOLE)
    sent = query(url)
    assert url.startswith(f"{AS}/authorize?")
    assert sent["client_id"] == "dcr-client" and sent["redirect_uri"] == CONSOLE + CALLBACK
    assert (sent["code_challenge_method"], sent["resource"], sent["scope"]) == ("S256", MCP, "issues:read")
    registration = json.loads(next(r for r in auth_server.seen if r.url.path == "/register").content)
    assert registration["redirect_uris"] == [CONSOLE + CALLBACK]
    assert registration["token_endpoint_auth_method"] == "client_secret_post"
    client_row = UpstreamClient.objects.get(server=tracker)
    assert (client_row.registration, client_row.token_auth_method) == ("dcr", "client_secret_post")

    auth_server.token_answers.append(bearer("access-1a2b", "refresh-3c4d", scope="issues:read"))
    page = client.get(CALLBACK, {"state": sent["state"], "code": "code-9", "iss": AS})
    assert page.status_code == 200 and b'data-connect-outcome="connected"' in page.content
    exchange = auth_server.forms("/token")[0]
    assert exchange["grant_type"] == "authorization_code" and exchange["client_secret"] == "dcr-secret"
    assert challenge_for(exchange["code_verifier"]) == sent["code_challenge"]
    assert (exchange["resource"], exchange["redirect_uri"]) == (MCP, CONSOLE + CALLBACK)
    assert bearer_for(tracker, None) == "access-1a2b"
    tracker.refresh_from_db()
    assert tracker.health == Server.Health.UNKNOWN
    actions = set(AuditEvent.objects.values_list("action", flat=True))
    assert {"upstream_oauth.discovered", "upstream_oauth.registered", "upstream_oauth.authorized"} <= actions
    assert not any(secret in audit_text() for secret in ("access-1a2b", "refresh-3c4d", "dcr-secret", "code-9"))
    with connection.cursor() as cursor:
        cursor.execute("SELECT access_token, refresh_token FROM approvals_upstreamgrant")
        assert not any("access-1a2b" in v or "refresh-3c4d" in v for v in cursor.fetchone())


def test_connect_asks_for_offline_access_with_consent_only_where_the_authorization_server_lists_it(
    tracker, auth_server
):
    admin = make_user("ada", roles.ADMIN)
    sent = query(start_connect(tracker, base_url=CONSOLE, started_by=admin))
    assert sent["scope"] == "issues:read" and "prompt" not in sent

    auth_server.metadata["scopes_supported"] = ["openid", "issues:read", "offline_access"]
    sent = query(start_connect(tracker, base_url=CONSOLE, started_by=admin))
    assert (sent["scope"], sent["prompt"]) == ("issues:read offline_access", "consent")
    assert UpstreamAuthorization.objects.filter(scope="issues:read offline_access").count() == 1
    # A step-up names it already: it is not asked for twice.
    sent = query(start_connect(tracker, base_url=CONSOLE, started_by=admin, scope="issues:write offline_access"))
    assert sent["scope"] == "issues:write offline_access"


def test_a_state_that_matches_no_flow_is_refused_and_a_flow_is_spent_once(tracker, auth_server, client, no_sync):
    sent = query(start_connect(tracker, base_url=CONSOLE))
    refused = client.get(CALLBACK, {"state": "forged", "code": "c"})
    assert refused.status_code == 400 and b"unknown, already used or expired" in refused.content
    auth_server.token_answers.append(bearer("a1"))
    assert client.get(CALLBACK, {"state": sent["state"], "code": "c"}).status_code == 200
    assert client.get(CALLBACK, {"state": sent["state"], "code": "c"}).status_code == 400


def test_an_iss_that_is_not_the_issuers_fails_the_flow_without_a_token_request(tracker, auth_server, client):
    sent = query(start_connect(tracker, base_url=CONSOLE))
    page = client.get(CALLBACK, {"state": sent["state"], "code": "c", "iss": "https://evil.test"})
    assert page.status_code == 400 and b"mix-up" in page.content
    assert auth_server.forms("/token") == []
    assert UpstreamAuthorization.objects.get().outcome.startswith("the response came from issuer")
    assert AuditEvent.objects.filter(action="upstream_oauth.authorization_failed").exists()
    with pytest.raises(NeedsAuthorization):
        bearer_for(tracker, None)


def test_an_authorization_error_or_a_missing_promised_iss_fails_the_flow(tracker, auth_server, client):
    auth_server.metadata["authorization_response_iss_parameter_supported"] = True
    first, second = (query(start_connect(tracker, base_url=CONSOLE)) for _ in range(2))
    assert (
        b"refused: access_denied" in client.get(CALLBACK, {"state": first["state"], "error": "access_denied"}).content
    )
    assert b"sent none" in client.get(CALLBACK, {"state": second["state"], "code": "c"}).content


def connected(server, **fields):
    defaults = {"access_token": "old-access", "refresh_token": "old-refresh", "scope": "issues:read"}
    defaults |= {"status": UpstreamGrant.Status.CONNECTED, "expires_at": timezone.now() + timedelta(seconds=30)}
    UpstreamGrant.objects.filter(server=server, user=None).update(
        **{k: v for k, v in defaults.items() if "token" not in k}
    )
    grant = UpstreamGrant.objects.get(server=server, user=None)
    grant.access_token, grant.refresh_token = fields.pop("access_token", "old-access"), "old-refresh"
    for name, value in fields.items():
        setattr(grant, name, value)
    grant.save()
    server_tokens.discover(server)
    UpstreamClient.objects.filter(server=server).update(client_id="c", registration="dcr", token_auth_method="none")
    return grant


def test_a_token_near_its_expiry_is_refreshed_and_the_rotated_refresh_token_kept(tracker, auth_server):
    connected(tracker)
    auth_server.token_answers.append(bearer("new-access", "new-refresh"))
    assert bearer_for(tracker, None) == "new-access"
    grant = UpstreamGrant.objects.get(server=tracker, user=None)
    assert (grant.refresh_token, grant.status) == ("new-refresh", UpstreamGrant.Status.CONNECTED)
    refresh = auth_server.forms("/token")[0]
    assert (refresh["grant_type"], refresh["refresh_token"], refresh["resource"]) == (
        "refresh_token",
        "old-refresh",
        MCP,
    )
    assert AuditEvent.objects.filter(action="upstream_oauth.refreshed").exists()
    assert bearer_for(tracker, None) == "new-access"  # far from expiry now: no second request
    assert len(auth_server.forms("/token")) == 1


def test_it_renews_a_short_lived_token_at_half_its_life_not_before_every_request(tracker, auth_server):
    issued = timezone.now()
    grant = connected(tracker, refreshed_at=issued, expires_at=issued + timedelta(seconds=40))
    assert bearer_for(tracker, None) == "old-access" and auth_server.forms("/token") == []
    issued -= timedelta(seconds=25)
    UpstreamGrant.objects.filter(pk=grant.pk).update(refreshed_at=issued, expires_at=issued + timedelta(seconds=40))
    auth_server.token_answers.append(bearer("next-access", expires_in=40))
    assert bearer_for(tracker, None) == "next-access" and len(auth_server.forms("/token")) == 1
    renewed = UpstreamGrant.objects.get(pk=grant.pk)
    assert server_tokens.renew_at(renewed) == renewed.expires_at - timedelta(seconds=20)


def test_a_token_the_server_refused_is_refreshed_even_far_from_its_expiry_and_without_resource_when_off(
    tracker, auth_server
):
    Server.objects.filter(pk=tracker.pk).update(resource_indicator=False)
    tracker.refresh_from_db()
    connected(tracker, expires_at=timezone.now() + timedelta(hours=1))
    auth_server.token_answers.append(bearer("next-access"))
    assert bearer_for(tracker, None) == "old-access"
    assert bearer_for(tracker, None, rejected="old-access") == "next-access"
    assert "resource" not in auth_server.forms("/token")[0]
    assert UpstreamGrant.objects.get(server=tracker, user=None).refresh_token == "old-refresh"


def test_a_refused_refresh_needs_authorization_with_a_banner_and_the_webhook_event(tracker, auth_server):
    WebhookEndpoint.objects.create(
        url="https://hooks.test/in", console_url=CONSOLE, events=["server.needs_authorization"], secret="whsec_x"
    )
    connected(tracker)
    Server.objects.filter(pk=tracker.pk).update(health=Server.Health.OK)
    auth_server.token_answers.append((400, {"error": "invalid_grant", "error_description": "revoked"}))
    with pytest.raises(NeedsAuthorization, match="Connect on its page") as needs:
        bearer_for(tracker, None)
    assert "invalid_grant: revoked" in needs.value.message
    tracker.refresh_from_db()
    grant = UpstreamGrant.objects.get(server=tracker, user=None)
    assert tracker.health == Server.Health.NEEDS_AUTHORIZATION and grant.access_token is None
    delivery = WebhookDelivery.objects.get(event_type="server.needs_authorization")
    assert delivery.payload["data"]["server"]["name"] == "Tracker"
    assert slack_text(delivery.payload).startswith("Tracker needs authorization: The authorization server refused")
    assert "|connect it>" in slack_text(delivery.payload)
    assert AuditEvent.objects.filter(action="upstream_oauth.refresh_refused").exists()


def test_it_closes_the_sessions_of_the_old_shared_token_when_an_admin_connects(
    tracker, auth_server, client, no_sync, monkeypatch
):
    closed = []
    monkeypatch.setattr(events, "upstream_retired", lambda name, identity=None: closed.append((name, identity)))
    sent = query(start_connect(tracker, base_url=CONSOLE))
    auth_server.token_answers.append(bearer("access-again"))
    assert client.get(CALLBACK, {"state": sent["state"], "code": "c"}).status_code == 200
    # Every process closes the sessions opened with the shared connection (identity ""), and no person's.
    assert closed == [("Tracker", "")]


def test_a_step_up_asks_for_the_wider_scope_and_a_refusal_despite_it_is_an_error(tracker, auth_server):
    grant = connected(tracker, expires_at=timezone.now() + timedelta(hours=1))
    needs = stepped_up(tracker, None, "old-access", {"scope": "issues:write"})
    assert isinstance(needs, NeedsAuthorization) and needs.scope == "issues:read issues:write"
    assert query(start_connect(tracker, base_url=CONSOLE))["scope"] == "issues:read issues:write"
    grant.refresh_from_db()
    grant.status, grant.scope = UpstreamGrant.Status.CONNECTED, "issues:read issues:write"
    grant.save()
    assert stepped_up(tracker, None, "other-token", {"scope": "issues:write"}) is None
    loop = stepped_up(tracker, None, "old-access", {"scope": "issues:write"})
    assert isinstance(loop, UpstreamError) and "will not help" in loop.message


def test_client_credentials_get_a_token_without_a_person(db, auth_server):
    from approvals.actions.servers import add_server

    server = add_server(
        name="Billing",
        transport="http",
        url=MCP,
        schedule_sync=False,
        oauth=Server.OAuth.CLIENT_CREDENTIALS,
        client_id="machine",
        client_secret="machine-secret",
    )
    auth_server.metadata["token_endpoint_auth_methods_supported"] = ["client_secret_basic"]
    auth_server.token_answers.append(bearer("cc-access", expires_in=3600))
    assert bearer_for(server, None) == "cc-access"
    sent = auth_server.seen[-1]
    assert sent.headers["authorization"].startswith("Basic ") and b"client_credentials" in sent.content
    assert AuditEvent.objects.filter(action="upstream_oauth.client_credentials").exists()
    assert "machine-secret" not in audit_text()


def test_connect_refuses_a_stdio_server_and_a_server_whose_metadata_is_bad(db, auth_server):
    stdio = make_server("Local", transport=Server.Transport.STDIO, url="", command="x")
    with pytest.raises(ConnectError, match="stdio"):
        start_connect(stdio, base_url=CONSOLE)
    broken = make_server("Broken", url=MCP)
    auth_server.metadata["issuer"] = "https://elsewhere.test"
    with pytest.raises(ConnectError, match="another origin"):
        start_connect(broken, base_url=CONSOLE)


def test_a_dump_of_the_database_holds_no_token_secret_key_or_verifier(tracker, auth_server, client, no_sync):
    from io import StringIO

    from django.core.management import call_command

    client_row = UpstreamClient.objects.get(server=tracker)
    client_row.private_key = "-----BEGIN PRIVATE KEY-----pk-5e5e-----END PRIVATE KEY-----"
    client_row.save()
    sent = query(start_connect(tracker, base_url=CONSOLE))
    auth_server.token_answers.append(bearer("access-dump-1", "refresh-dump-2"))
    client.get(CALLBACK, {"state": sent["state"], "code": "c"})
    flow = UpstreamAuthorization.objects.get()
    dump = StringIO()
    call_command("dumpdata", "approvals", stdout=dump)
    secrets = ("access-dump-1", "refresh-dump-2", "dcr-secret", "pk-5e5e", flow.code_verifier)
    assert not [secret for secret in secrets if secret in dump.getvalue()]


def test_flows_are_forgotten_a_day_after_they_expire(tracker, auth_server):
    from approvals.upstream_oauth.connecting import prune_flows

    start_connect(tracker, base_url=CONSOLE)
    start_connect(tracker, base_url=CONSOLE)
    UpstreamAuthorization.objects.filter(pk=UpstreamAuthorization.objects.first().pk).update(
        expires_at=timezone.now() - timedelta(days=2)
    )
    assert prune_flows() == 1 and UpstreamAuthorization.objects.count() == 1
