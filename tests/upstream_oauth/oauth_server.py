"""A scripted authorization server for in-process tests of the console's upstream OAuth: its answers are
httpx.MockTransport's, so no socket is opened, and every request it saw is kept for the test to read."""

import json
from dataclasses import dataclass, field
from urllib.parse import parse_qs

import httpx

from approvals.upstream.oauth_http import OAuthHttp

MCP = "https://tracker.test/mcp"
AS = "https://auth.tracker.test"
PRM = "https://tracker.test/.well-known/oauth-protected-resource/mcp"


@dataclass
class ScriptedAuthServer:
    metadata: dict = field(
        default_factory=lambda: {
            "issuer": AS,
            "authorization_endpoint": f"{AS}/authorize",
            "token_endpoint": f"{AS}/token",
            "registration_endpoint": f"{AS}/register",
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["client_secret_post"],
        }
    )
    scopes_supported: list | None = None
    # Each token request's answer, in turn: a dict is a 200's JSON, (status, dict) anything else.
    token_answers: list = field(default_factory=list)
    seen: list = field(default_factory=list)

    def forms(self, path: str) -> list[dict]:
        """The form of each POST to `path`, one value per name."""
        return [{k: v[0] for k, v in parse_qs(r.content.decode()).items()} for r in self.seen if r.url.path == path]

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(request)
        url = str(request.url).split("?")[0]
        if url == PRM:
            prm = {"resource": MCP, "authorization_servers": [AS]}
            if self.scopes_supported is not None:
                prm["scopes_supported"] = self.scopes_supported
            return httpx.Response(200, json=prm)
        if url == f"{AS}/.well-known/oauth-authorization-server":
            return httpx.Response(200, json=self.metadata)
        if url == f"{AS}/register":
            document = json.loads(request.content)
            return httpx.Response(201, json=document | {"client_id": "dcr-client", "client_secret": "dcr-secret"})
        if url == f"{AS}/token" and self.token_answers:
            answer = self.token_answers.pop(0)
            status, body = answer if isinstance(answer, tuple) else (200, answer)
            return httpx.Response(status, json=body)
        return httpx.Response(404, text="Not Found")

    def install(self, monkeypatch):
        from approvals.upstream_oauth import server_tokens

        monkeypatch.setattr(server_tokens, "oauth_http", lambda: OAuthHttp(5, httpx.MockTransport(self.handle)))
        return self


def bearer(access: str, refresh: str = "", expires_in: int = 3600, scope: str | None = None) -> dict:
    answer = {"access_token": access, "token_type": "Bearer", "expires_in": expires_in}
    return answer | ({"refresh_token": refresh} if refresh else {}) | ({"scope": scope} if scope is not None else {})


def returning_admin():
    """The signed-in admin whose browser comes back with a flow no person started (connect_server's)."""
    from django.contrib.auth import get_user_model

    from approvals import roles
    from tests.fixtures.people import make_user

    return get_user_model().objects.filter(username="returning-admin").first() or make_user(
        "returning-admin", roles.ADMIN
    )
