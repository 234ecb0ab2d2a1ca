"""The console's HTTP toward upstream authorization servers, against scripted answers (httpx.MockTransport) and,
for a token endpoint that never answers, a socket on 127.0.0.1 that accepts and stays silent."""

import asyncio
import base64
import json
from urllib.parse import parse_qs

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from approvals.upstream import AuthorizationRequired, UpstreamError
from approvals.upstream.oauth_http import MAX_METADATA_BYTES, Client, OAuthHttp

MCP = "http://mcp.test/mcp"
AS = "http://auth.test"
AS_METADATA = {
    "issuer": AS,
    "authorization_endpoint": f"{AS}/authorize",
    "token_endpoint": f"{AS}/token",
    "registration_endpoint": f"{AS}/register",
    "code_challenge_methods_supported": ["S256"],
}


def serving(routes: dict, seen: list | None = None):
    """A MockTransport answering each URL from `routes` (a response, or a function of the request), else 404."""

    def handle(request: httpx.Request) -> httpx.Response:
        if seen is not None:
            seen.append(request)
        answer = routes.get(str(request.url).split("?")[0])
        if answer is None:
            return httpx.Response(404, text="Not Found")
        return answer(request) if callable(answer) else answer

    return httpx.MockTransport(handle)


async def test_it_follows_the_challenges_metadata_to_the_authorization_servers():
    seen = []
    routes = {
        "http://mcp.test/custom/prm.json": httpx.Response(
            200, json={"resource": MCP, "authorization_servers": [AS], "scopes_supported": ["read"]}
        ),
        f"{AS}/.well-known/oauth-authorization-server": httpx.Response(200, json=AS_METADATA),
    }
    async with OAuthHttp(5, serving(routes, seen)) as http:
        found = await http.discover(MCP, {"resource_metadata": "http://mcp.test/custom/prm.json"})
    assert (found.resource, found.issuer, found.scopes_supported, found.legacy) == (MCP, AS, ["read"], False)
    assert found.endpoint("token_endpoint") == f"{AS}/token"
    assert [str(r.url) for r in seen] == [
        "http://mcp.test/custom/prm.json",
        f"{AS}/.well-known/oauth-authorization-server",
    ]


async def test_a_server_without_resource_metadata_is_taken_as_2025_03_26_with_its_default_endpoints():
    async with OAuthHttp(5, serving({})) as http:
        found = await http.discover(MCP, {})
    assert found.legacy and found.endpoint("authorization_endpoint") == "http://mcp.test/authorize"
    assert (found.resource, found.issuer) == (MCP, "")


async def test_a_2025_03_26_servers_own_metadata_names_its_issuer_even_with_a_path():
    metadata = AS_METADATA | {"issuer": "http://mcp.test/oauth", "authorization_endpoint": "http://mcp.test/oauth/a"}
    routes = {"http://mcp.test/.well-known/oauth-authorization-server": httpx.Response(200, json=metadata)}
    async with OAuthHttp(5, serving(routes)) as http:
        found = await http.discover(MCP, {})
    assert (found.legacy, found.issuer, found.endpoint("authorization_endpoint")) == (
        True,
        "http://mcp.test/oauth",
        "http://mcp.test/oauth/a",
    )


async def test_metadata_that_is_not_json_is_an_error_that_says_so():
    routes = {"http://mcp.test/.well-known/oauth-protected-resource/mcp": httpx.Response(200, text="<html>")}
    async with OAuthHttp(5, serving(routes)) as http:
        with pytest.raises(UpstreamError, match="not JSON"):
            await http.discover(MCP, {})


async def test_an_authorization_server_on_another_origin_than_its_metadata_says_is_refused():
    routes = {
        "http://mcp.test/.well-known/oauth-protected-resource/mcp": httpx.Response(
            200, json={"resource": MCP, "authorization_servers": [AS]}
        ),
        f"{AS}/.well-known/oauth-authorization-server": httpx.Response(
            200, json=AS_METADATA | {"issuer": "http://elsewhere.test"}
        ),
    }
    async with OAuthHttp(5, serving(routes)) as http:
        with pytest.raises(UpstreamError, match="another origin"):
            await http.discover(MCP, {})


async def test_resource_metadata_for_another_server_is_refused():
    routes = {
        "http://mcp.test/.well-known/oauth-protected-resource/mcp": httpx.Response(
            200, json={"resource": "http://evil.test/mcp", "authorization_servers": [AS]}
        ),
    }
    async with OAuthHttp(5, serving(routes)) as http:
        with pytest.raises(UpstreamError, match="not for"):
            await http.discover(MCP, {})


def token_answer(request: httpx.Request) -> httpx.Response:
    return httpx.Response(200, json={"access_token": "at", "token_type": "bearer", "expires_in": 60})


@pytest.mark.parametrize(
    "method, header, form",
    [
        # RFC 6749 2.3.1: each part form-encoded, then joined for Basic; the id named in the body too, the secret not.
        ("client_secret_basic", "Basic " + base64.b64encode(b"id%3Ax:s%20%26t").decode(), {"client_id": ["id:x"]}),
        ("client_secret_post", None, {"client_id": ["id:x"], "client_secret": ["s &t"]}),
        ("none", None, {"client_id": ["id:x"]}),
    ],
)
async def test_it_authenticates_at_the_token_endpoint_as_the_client_registered(method, header, form):
    seen = []
    async with OAuthHttp(5, serving({f"{AS}/token": token_answer}, seen)) as http:
        tokens = await http.token(f"{AS}/token", Client("id:x", method, "s &t"), {"grant_type": "x", "scope": ""})
    assert (tokens.access_token, tokens.expires_in, tokens.refresh_token, tokens.scope) == ("at", 60, "", None)
    sent = parse_qs(seen[0].content.decode())
    assert seen[0].headers.get("authorization") == header
    assert {k: v for k, v in sent.items() if k.startswith("client")} == form
    assert "scope" not in sent


async def test_a_private_key_jwt_assertion_is_signed_by_the_clients_key_for_the_issuer():
    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    seen = []
    client = Client("cc-client", "private_key_jwt", private_key=pem, signing_algorithm="ES256", audience=AS)
    async with OAuthHttp(5, serving({f"{AS}/token": token_answer}, seen)) as http:
        await http.token(f"{AS}/token", client, {"grant_type": "client_credentials"})
    sent = {k: v[0] for k, v in parse_qs(seen[0].content.decode()).items()}
    assert sent["client_assertion_type"] == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    claims = jwt.decode(sent["client_assertion"], key.public_key(), algorithms=["ES256"], audience=AS)
    assert claims["iss"] == claims["sub"] == "cc-client" and claims["jti"]


async def test_a_refused_grant_needs_a_person_and_a_failing_server_is_only_an_error():
    routes = {
        f"{AS}/refused": httpx.Response(400, json={"error": "invalid_grant", "error_description": "revoked"}),
        f"{AS}/down": httpx.Response(503, text="busy"),
        f"{AS}/odd": httpx.Response(200, json={"access_token": "a", "token_type": "mac"}),
    }
    async with OAuthHttp(5, serving(routes)) as http:
        with pytest.raises(AuthorizationRequired, match="invalid_grant: revoked"):
            await http.token(f"{AS}/refused", Client("c"), {"grant_type": "refresh_token"})
        with pytest.raises(UpstreamError, match="HTTP 503") as down:
            await http.token(f"{AS}/down", Client("c"), {"grant_type": "refresh_token"})
        assert down.value.retryable and not isinstance(down.value, AuthorizationRequired)
        with pytest.raises(UpstreamError, match="not Bearer"):
            await http.token(f"{AS}/odd", Client("c"), {"grant_type": "refresh_token"})


async def test_registration_returns_the_servers_answer_or_says_why_not():
    routes = {
        f"{AS}/register": lambda request: httpx.Response(201, json={"client_id": "new", **json.loads(request.content)}),
        f"{AS}/closed": httpx.Response(403, json={"error": "access_denied"}),
    }
    async with OAuthHttp(5, serving(routes)) as http:
        assert (await http.register(f"{AS}/register", {"client_name": "c"}))["client_id"] == "new"
        with pytest.raises(UpstreamError, match="access_denied"):
            await http.register(f"{AS}/closed", {})


async def test_a_token_endpoint_that_hangs_fails_within_the_timeout():
    accepted = []

    async def silent(reader, writer):
        accepted.append(writer)  # read nothing, answer nothing: the client's timeout must end it

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        async with OAuthHttp(0.3, allowed_hosts=["127.0.0.1"]) as http:
            with pytest.raises(UpstreamError, match="no answer within 0.3s") as hung:
                await http.token(f"http://127.0.0.1:{port}/token", Client("c"), {"grant_type": "refresh_token"})
        assert hung.value.retryable
    finally:
        for writer in accepted:
            writer.close()
        server.close()
        await server.wait_closed()


async def test_a_token_endpoint_that_trickles_its_answer_fails_within_the_timeout_too():
    async def trickle(reader, writer):
        try:
            for byte in b"HTTP/1.1 200 OK\r\n" * 1000:  # each byte well within a read's timeout, never an answer
                writer.write(bytes([byte]))
                await writer.drain()
                await asyncio.sleep(0.05)
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(trickle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        async with OAuthHttp(0.3, allowed_hosts=["127.0.0.1"]) as http:
            with pytest.raises(UpstreamError, match="no answer within 0.3s"):
                await http.token(f"http://127.0.0.1:{port}/token", Client("c"), {"grant_type": "refresh_token"})
    finally:
        server.close()
        await server.wait_closed()


async def test_an_answer_far_larger_than_the_size_cap_is_refused_once_it_passes_the_cap():
    sent = []

    async def endless():
        # Sixteen times the cap: what a client reading it whole before checking would take in.
        for _ in range(16 * MAX_METADATA_BYTES // (64 * 1024)):
            sent.append(64 * 1024)
            yield b" " * (64 * 1024)

    stream = serving(
        {f"{AS}/.well-known/oauth-authorization-server": lambda request: httpx.Response(200, content=endless())}
    )
    async with OAuthHttp(30, stream) as http:
        with pytest.raises(UpstreamError, match=f"more than {MAX_METADATA_BYTES} bytes"):
            await http.get_json(f"{AS}/.well-known/oauth-authorization-server")

    # Stopped at the cap, not read to the end.
    assert sum(sent) <= MAX_METADATA_BYTES + 64 * 1024
