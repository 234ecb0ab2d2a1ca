"""An upstream MCP server that accepts only OAuth, with its own small authorization server.

    python tests/servers/oauth_upstream.py PORT [--access-seconds N]

At http://127.0.0.1:PORT: the MCP endpoint /mcp, its protected resource metadata
(RFC 9728) and the 401 that names it, the authorization server's metadata (RFC 8414),
dynamic client registration, /authorize with PKCE S256, /token (code and refresh grants,
refresh tokens rotated) and /revoke, all the official SDK's. What the SDK leaves to its
provider is here: a consent page where a person types which account of this server
consents and approves or denies, access tokens that live N seconds (default 3600; a few
let a test see one expire and the client refresh it), and tokens bound to the account
and to the resource they were asked for.

The tests drive it through plain HTTP, outside OAuth:
    POST /control/revoke  {"account": A}   drops A's refresh and access tokens, as when a
                                           person withdraws an app's access upstream
    POST /control/expire  {"account": A}   drops A's access tokens alone, as when they expire
                                           earlier than the client was told
    GET  /control/state                    {"calls": [{tool, account, access_token}] (a read of
                                            the resource profile://me is a call of that name),
                                            "issued": [{account, grant, access_token}]}
"""

import argparse
import html
import secrets
import time
from urllib.parse import urlencode

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    TokenError,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

SCOPES = ["files:read", "files:write"]
CODE_SECONDS = 300
REFRESH_SECONDS = 30 * 24 * 3600


class Provider:
    """The SDK's OAuthAuthorizationServerProvider, kept in memory for one test's run."""

    def __init__(self, issuer: str, access_seconds: int):
        self.issuer = issuer
        self.access_seconds = access_seconds
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.pending: dict[str, tuple[str, AuthorizationParams]] = {}  # consent id -> client id, params
        self.codes: dict[str, AuthorizationCode] = {}
        self.refresh_tokens: dict[str, RefreshToken] = {}
        self.access_tokens: dict[str, AccessToken] = {}
        self.issued: list[dict] = []
        self.calls: list[dict] = []

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        consent = secrets.token_urlsafe(16)
        self.pending[consent] = (client.client_id, params)
        return f"{self.issuer}/consent?{urlencode({'request': consent})}"

    def approve(self, consent: str, account: str) -> str:
        client_id, params = self.pending.pop(consent)
        code = secrets.token_urlsafe(24)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [],
            expires_at=time.time() + CODE_SECONDS,
            client_id=client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
            subject=account,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state, iss=self.issuer)

    def deny(self, consent: str) -> str:
        _, params = self.pending.pop(consent)
        return construct_redirect_uri(
            str(params.redirect_uri), error="access_denied", state=params.state, iss=self.issuer
        )

    async def load_authorization_code(self, client: OAuthClientInformationFull, authorization_code: str):
        code = self.codes.get(authorization_code)
        return code if code is not None and code.client_id == client.client_id else None

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ):
        del self.codes[authorization_code.code]
        return self._issue(
            client.client_id,
            authorization_code.scopes,
            authorization_code.resource,
            authorization_code.subject,
            "authorization_code",
        )

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str):
        token = self.refresh_tokens.get(refresh_token)
        return token if token is not None and token.client_id == client.client_id else None

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ):
        # Rotation: the refresh token presented is spent, so presenting it again is refused.
        if self.refresh_tokens.pop(refresh_token.token, None) is None:
            raise TokenError("invalid_grant", "refresh token already used")
        return self._issue(client.client_id, scopes, refresh_token.resource, refresh_token.subject, "refresh_token")

    async def load_access_token(self, token: str) -> AccessToken | None:
        return self.access_tokens.get(token)

    async def revoke_token(self, token) -> None:
        self.refresh_tokens.pop(token.token, None)
        self.access_tokens.pop(token.token, None)

    def revoke_account(self, account: str, kinds=("refresh", "access")) -> int:
        dropped = 0
        for tokens in [{"refresh": self.refresh_tokens, "access": self.access_tokens}[kind] for kind in kinds]:
            for value in [value for value, token in tokens.items() if token.subject == account]:
                del tokens[value]
                dropped += 1
        return dropped

    def _issue(self, client_id, scopes, resource, account, grant) -> OAuthToken:
        access, refresh = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        now = int(time.time())
        self.access_tokens[access] = AccessToken(
            token=access,
            client_id=client_id,
            scopes=scopes,
            expires_at=now + self.access_seconds,
            resource=resource,
            subject=account,
        )
        self.refresh_tokens[refresh] = RefreshToken(
            token=refresh,
            client_id=client_id,
            scopes=scopes,
            expires_at=now + REFRESH_SECONDS,
            resource=resource,
            subject=account,
        )
        self.issued.append({"account": account, "grant": grant, "access_token": access})
        return OAuthToken(
            access_token=access, expires_in=self.access_seconds, scope=" ".join(scopes), refresh_token=refresh
        )


CONSENT_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Authorize {client}</title></head>
<body><main>
<h1>Authorize {client}</h1>
<p>{client} asks to use this server on your behalf, with: {scopes}.</p>
<form method="post" action="/consent">
  <input type="hidden" name="request" value="{request}">
  <label for="account">Account</label> <input id="account" name="account" required>
  <button type="submit" name="answer" value="approve">Approve</button>
  <button type="submit" name="answer" value="deny" formnovalidate>Deny</button>
</form>
</main></body></html>
"""


def build(port: int, access_seconds: int) -> MCPServer:
    issuer = f"http://127.0.0.1:{port}"
    provider = Provider(issuer, access_seconds)
    server = MCPServer(
        "oauth-test-upstream",
        version="1.0.0",
        auth_server_provider=provider,
        auth=AuthSettings(
            issuer_url=issuer,
            resource_server_url=f"{issuer}/mcp",
            validate_token_resource=True,
            client_registration_options=ClientRegistrationOptions(
                enabled=True, valid_scopes=SCOPES, default_scopes=SCOPES
            ),
            revocation_options=RevocationOptions(enabled=True),
        ),
    )

    def record(tool: str) -> str:
        token = get_access_token()
        provider.calls.append({"tool": tool, "account": token.subject, "access_token": token.token})
        return token.subject

    @server.tool(structured_output=False)
    def whoami() -> str:
        """Names the account of this server the call acts for."""
        return f"account: {record('whoami')}"

    @server.tool(structured_output=False)
    def echo(message: str) -> str:
        """Echoes the message back."""
        record("echo")
        return message

    @server.resource("profile://me", name="profile", mime_type="text/plain")
    def profile() -> str:
        """The profile of the account the read acts for."""
        return f"account: {record('profile://me')}"

    @server.custom_route("/consent", methods=["GET", "POST"])
    async def consent(request: Request) -> Response:
        if request.method == "GET":
            pending = provider.pending.get(request.query_params.get("request", ""))
            if pending is None:
                return HTMLResponse("<p>No such authorization request.</p>", status_code=400)
            client = provider.clients[pending[0]]
            return HTMLResponse(
                CONSENT_PAGE.format(
                    client=html.escape(client.client_name or client.client_id),
                    scopes=html.escape(" ".join(pending[1].scopes or []) or "no particular scope"),
                    request=html.escape(request.query_params["request"]),
                )
            )
        form = await request.form()
        if form.get("request") not in provider.pending:
            return HTMLResponse("<p>No such authorization request.</p>", status_code=400)
        if form.get("answer") == "approve" and form.get("account"):
            return RedirectResponse(provider.approve(form["request"], form["account"]), status_code=302)
        return RedirectResponse(provider.deny(form["request"]), status_code=302)

    @server.custom_route("/control/revoke", methods=["POST"])
    async def revoke(request: Request) -> Response:
        account = (await request.json())["account"]
        return JSONResponse({"dropped": provider.revoke_account(account)})

    @server.custom_route("/control/expire", methods=["POST"])
    async def expire(request: Request) -> Response:
        account = (await request.json())["account"]
        return JSONResponse({"dropped": provider.revoke_account(account, kinds=("access",))})

    @server.custom_route("/control/state", methods=["GET"])
    async def state(request: Request) -> Response:
        return JSONResponse({"calls": provider.calls, "issued": provider.issued})

    return server


if __name__ == "__main__":
    import anyio

    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("--access-seconds", type=int, default=3600)
    args = parser.parse_args()
    anyio.run(lambda: build(args.port, args.access_seconds).run_streamable_http_async(port=args.port))
