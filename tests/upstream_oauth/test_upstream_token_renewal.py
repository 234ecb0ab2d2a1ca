"""Renewing an upstream token: no transaction is held while the authorization server is asked, one process
asks for all, and a short-lived token is renewed at half its life. The token endpoint that hangs is a local
server the test holds and lets go."""

import threading
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs

import pytest
from django.db import connections, transaction
from django.utils import timezone

from approvals.audit import chain
from approvals.audit.chain import SYSTEM
from approvals.audit.models import AuditEvent
from approvals.catalog.models import Server
from approvals.protocol.oauth_params import state_digest
from approvals.upstream_oauth import token_claims
from approvals.upstream_oauth.bearer import bearer_for
from approvals.upstream_oauth.connecting import ConnectError, finish_connect
from approvals.upstream_oauth.models import UpstreamAuthorization, UpstreamClient, UpstreamGrant
from tests.fixtures.catalog import make_server
from tests.fixtures.http_answers import send_json
from tests.upstream_oauth.oauth_server import bearer, returning_admin

# Far beyond what a write waits for when nothing holds the database, far below the 20 s SQLite waits for a lock.
WRITE_SECONDS = 8


class HeldTokenEndpoint(ThreadingHTTPServer):
    """A token endpoint that answers each request only when the test lets it go: the first with new tokens,
    any other with tokens that tell it apart."""

    def __init__(self):
        self.arrived, self.let_go, self.forms = threading.Event(), threading.Event(), []
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"])).decode()
                endpoint.forms.append({k: v[0] for k, v in parse_qs(body).items()})
                nth = len(endpoint.forms)
                endpoint.arrived.set()
                endpoint.let_go.wait(30)
                send_json(self, 200, bearer(f"new-access-{nth}", f"new-refresh-{nth}"))

            def log_message(self, *args):
                pass

        super().__init__(("127.0.0.1", 0), Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/token"


@pytest.fixture
def token_endpoint():
    endpoint = HeldTokenEndpoint()
    thread = threading.Thread(target=endpoint.serve_forever, daemon=True)
    thread.start()
    yield endpoint
    endpoint.let_go.set()
    endpoint.shutdown()
    endpoint.server_close()
    thread.join(10)


@pytest.fixture
def expiring(transactional_db, token_endpoint):
    """A shared connection whose access token is about to expire, its authorization server the held endpoint."""
    server = make_server("Tracker", url="https://tracker.test/mcp", oauth=Server.OAuth.AUTHORIZATION_CODE)
    UpstreamClient.objects.create(
        server=server, client_id="c", token_auth_method="none", token_endpoint=token_endpoint.url
    )
    grant = UpstreamGrant(server=server, status=UpstreamGrant.Status.CONNECTED)
    grant.connected_at = timezone.now() - timedelta(hours=1)
    grant.access_token, grant.refresh_token = "old-access", "old-refresh"
    grant.expires_at = timezone.now() + timedelta(seconds=5)
    grant.save()
    return server


def in_thread(work):
    """Runs `work()` in a thread of its own (its own database connection); what it returned or raised."""
    outcome = {}

    def run():
        try:
            outcome["value"] = work()
        except Exception as exc:
            outcome["error"] = exc
        finally:
            connections.close_all()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, outcome


def test_it_keeps_no_write_waiting_while_a_token_endpoint_hangs(expiring, token_endpoint):
    refresher, refreshed = in_thread(lambda: bearer_for(expiring, None))
    assert token_endpoint.arrived.wait(10), f"the refresh reached the token endpoint: {refreshed}"

    def write():
        with transaction.atomic():
            chain.record("call.received", SYSTEM, server=expiring, data={})
            UpstreamGrant.objects.filter(server=expiring).update(reason="")

    writer, written = in_thread(write)
    writer.join(WRITE_SECONDS)
    held_up = writer.is_alive()
    token_endpoint.let_go.set()
    writer.join(30)
    refresher.join(30)

    assert not held_up, "a write waited for the token endpoint"
    assert "error" not in written and AuditEvent.objects.filter(action="call.received").exists()
    assert refreshed == {"value": "new-access-1"}
    grant = UpstreamGrant.objects.get(server=expiring)
    assert (grant.refresh_token, grant.refresh_claim, grant.refreshing_until) == ("new-refresh-1", "", None)


def test_it_sends_one_refresh_for_two_that_need_it_at_once(expiring, token_endpoint, monkeypatch):
    kept_waiting = threading.Event()
    claim = token_claims.claim

    def claim_seen(grant_pk):
        mine = claim(grant_pk)
        if mine is None:
            kept_waiting.set()
        return mine

    monkeypatch.setattr(token_claims, "claim", claim_seen)
    first, first_got = in_thread(lambda: bearer_for(expiring, None))
    assert token_endpoint.arrived.wait(10), "the first refresh reached the token endpoint"
    second, second_got = in_thread(lambda: bearer_for(expiring, None))
    assert kept_waiting.wait(10), "the second found the first's claim"
    token_endpoint.let_go.set()
    first.join(30)
    second.join(30)

    assert first_got == second_got == {"value": "new-access-1"}
    assert [form["refresh_token"] for form in token_endpoint.forms] == ["old-refresh"]


def test_it_exchanges_a_code_once_and_outside_any_transaction(expiring, token_endpoint):
    state, expires_at = "state-1", timezone.now() + timedelta(minutes=10)
    UpstreamAuthorization.objects.create(
        state_digest=state_digest(state), server=expiring, code_verifier="v", redirect_uri="", expires_at=expires_at
    )
    admin = returning_admin()
    returned, came_back = in_thread(lambda: finish_connect(state, "code-1", None, by=admin))
    assert token_endpoint.arrived.wait(10), f"the exchange reached the token endpoint: {came_back}"

    writer, written = in_thread(lambda: chain.record("call.received", SYSTEM, server=expiring, data={}))
    writer.join(WRITE_SECONDS)
    held_up = writer.is_alive()
    second, again = in_thread(lambda: finish_connect(state, "code-1", None, by=admin))
    # Refused, it ends while the first exchange is still held; taken twice, it waits at the endpoint too.
    second.join(WRITE_SECONDS)
    token_endpoint.let_go.set()
    returned.join(30)
    second.join(30)

    assert not held_up, "a write waited for the token endpoint"
    assert isinstance(again.get("error"), ConnectError), "the same state came back twice and was taken twice"
    assert came_back["value"].outcome == UpstreamAuthorization.CONNECTED and len(token_endpoint.forms) == 1
    assert UpstreamGrant.objects.get(server=expiring).access_token == "new-access-1"
