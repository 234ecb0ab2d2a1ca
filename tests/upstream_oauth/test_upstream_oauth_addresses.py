"""Connecting a server whose authorization server is on a loopback address, which only UPSTREAM_ALLOWED_HOSTS
lets the console reach: against a real authorization server on 127.0.0.1 that keeps every request it gets."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest

from approvals.catalog.models import Server
from approvals.upstream_oauth.connecting import ConnectError, finish_connect, start_connect
from approvals.upstream_oauth.models import UpstreamAuthorization, UpstreamClient
from tests.fixtures.catalog import make_server
from tests.fixtures.http_answers import send_json
from tests.upstream_oauth.oauth_server import returning_admin

CONSOLE = "https://console.test"


class Handler(BaseHTTPRequestHandler):
    """Protected resource and authorization server metadata, registration and a token endpoint."""

    seen: list

    def log_message(self, *args):
        pass

    def base(self) -> str:
        return f"http://{self.headers['Host']}"

    def do_GET(self):
        self.seen.append(("GET", self.path, b""))
        base = self.base()
        documents = {
            "/.well-known/oauth-protected-resource/mcp": {"resource": f"{base}/mcp", "authorization_servers": [base]},
            "/.well-known/oauth-authorization-server": {
                "issuer": base,
                "authorization_endpoint": f"{base}/authorize",
                "token_endpoint": f"{base}/token",
                "registration_endpoint": f"{base}/register",
                "code_challenge_methods_supported": ["S256"],
            },
        }
        found = documents.get(self.path)
        send_json(self, 200 if found else 404, found or {})

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.seen.append(("POST", self.path, body))
        if self.path == "/register":
            return send_json(self, 201, json.loads(body) | {"client_id": "local-client"})
        send_json(self, 200, {"access_token": "a1", "token_type": "Bearer", "expires_in": 3600})


@pytest.fixture
def local_auth_server():
    seen = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), type("Local", (Handler,), {"seen": seen}))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", seen
    httpd.shutdown()
    httpd.server_close()


def test_connect_reaches_no_authorization_server_inside_unless_its_host_is_listed(db, local_auth_server, settings):
    base, seen = local_auth_server
    server = make_server("Local", url=f"{base}/mcp", oauth=Server.OAuth.AUTHORIZATION_CODE)
    settings.UPSTREAM_ALLOWED_HOSTS = []
    with pytest.raises(ConnectError, match="127.0.0.1 resolves to 127.0.0.1.*UPSTREAM_ALLOWED_HOSTS"):
        start_connect(server, base_url=CONSOLE)
    assert seen == []
    settings.UPSTREAM_ALLOWED_HOSTS = ["127.0.0.0/8"]
    sent = parse_qs(urlsplit(start_connect(server, base_url=CONSOLE)).query)
    assert sent["client_id"] == ["local-client"]
    assert [(method, path) for method, path, _ in seen][-1] == ("POST", "/register")


def test_a_code_is_not_exchanged_at_a_token_endpoint_inside_that_is_not_listed(db, local_auth_server, settings):
    """The console's secret, the code and the PKCE verifier go nowhere the address policy refuses."""
    base, seen = local_auth_server
    server = make_server("Local", url=f"{base}/mcp", oauth=Server.OAuth.AUTHORIZATION_CODE)
    url = start_connect(server, base_url=CONSOLE)
    state = parse_qs(urlsplit(url).query)["state"][0]
    UpstreamClient.objects.filter(server=server).update(
        client_secret="the-secret", token_auth_method="client_secret_post"
    )
    settings.UPSTREAM_ALLOWED_HOSTS = []
    admin = returning_admin()
    flow = finish_connect(state, "the-code", None, by=admin)
    assert "UPSTREAM_ALLOWED_HOSTS" in flow.outcome
    assert not [body for method, path, body in seen if path == "/token"]
    settings.UPSTREAM_ALLOWED_HOSTS = ["127.0.0.1"]
    again = parse_qs(urlsplit(start_connect(server, base_url=CONSOLE)).query)["state"][0]
    assert finish_connect(again, "the-code", None, by=admin).outcome == UpstreamAuthorization.CONNECTED
    [token_request] = [body for method, path, body in seen if path == "/token"]
    assert b"code_verifier=" in token_request
