"""Upstream OAuth endpoints under the webhooks' address policy: https only, nothing inside unless listed in
UPSTREAM_ALLOWED_HOSTS, each reached at the address checked."""

import asyncio
import socket

import httpx
import pytest

from approvals.upstream import UpstreamError
from approvals.upstream.oauth_http import Client, OAuthHttp
from approvals.upstream.outbound import PinnedTransport

PUBLIC = "93.184.215.14"
SECRETS = {"grant_type": "authorization_code", "code": "the-code", "code_verifier": "the-verifier"}
CLIENT = Client("console", auth_method="client_secret_post", client_secret="the-secret")


@pytest.fixture
def listener():
    """A token endpoint on 127.0.0.1 that counts who connects to it."""
    accepted = []

    async def start():
        async def note(reader, writer):
            accepted.append(await reader.read(65536))
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n")
            writer.write(b'{"access_token": "t", "token_type": "Bearer"}')
            await writer.drain()
            writer.close()

        return await asyncio.start_server(note, "127.0.0.1", 0)

    return start, accepted


@pytest.mark.parametrize("allowed", [[], ["10.0.0.0/8"], ["auth.example"]])
async def test_it_sends_no_secret_to_a_token_endpoint_on_loopback_unless_its_host_is_listed(listener, allowed):
    start, accepted = listener
    server = await start()
    port = server.sockets[0].getsockname()[1]
    try:
        async with OAuthHttp(5, allowed_hosts=allowed) as http:
            for scheme in ("http", "https"):
                with pytest.raises(UpstreamError, match="UPSTREAM_ALLOWED_HOSTS") as refused:
                    await http.token(f"{scheme}://127.0.0.1:{port}/token", CLIENT, SECRETS)
                assert not refused.value.retryable
        assert accepted == []
        async with OAuthHttp(5, allowed_hosts=["127.0.0.1"]) as http:
            assert (await http.token(f"http://127.0.0.1:{port}/token", CLIENT, SECRETS)).access_token == "t"
        assert b"the-verifier" in accepted[0]
    finally:
        server.close()
        await server.wait_closed()


@pytest.mark.parametrize(
    "url",
    [
        "https://localhost/token",
        "https://10.1.2.3/token",
        "https://192.168.0.10/register",
        "https://169.254.169.254/latest/meta-data/",
        "https://100.100.100.200/token",
        "https://[::1]/token",
        "https://[::ffff:127.0.0.1]/token",
        "https://[fd00:ec2::254]/token",
        "https://0.0.0.0/token",
    ],
)
async def test_it_refuses_an_endpoint_at_an_address_inside_before_connecting(url):
    async with OAuthHttp(2) as http:
        with pytest.raises(UpstreamError, match="UPSTREAM_ALLOWED_HOSTS"):
            await http.token(url, CLIENT, SECRETS)
        with pytest.raises(UpstreamError, match="UPSTREAM_ALLOWED_HOSTS"):
            await http.get_json(url)


def resolving(monkeypatch, addresses: dict):
    def getaddrinfo(host, port, *args, **kwargs):
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (ip, port)) for ip in addresses.get(host, [host])]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


def scripted(seen: list, routes: dict) -> PinnedTransport:
    """The pinned transport with nothing allowed, before a scripted server that answers by the Host a request
    names and its path, keeping each request."""

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        answer = routes.get(f"{request.headers['host']}{request.url.path}")
        return httpx.Response(200, json=answer) if answer is not None else httpx.Response(404)

    return PinnedTransport([], "UPSTREAM_ALLOWED_HOSTS", https_only=True, inner=httpx.MockTransport(handle))


async def test_it_refuses_plain_http_to_a_host_not_listed_though_its_address_is_public(monkeypatch):
    resolving(monkeypatch, {"auth.example": [PUBLIC]})
    seen = []
    pinned = scripted(seen, {})
    async with OAuthHttp(2, pinned) as http:
        with pytest.raises(UpstreamError, match="not https, and only a host listed in UPSTREAM_ALLOWED_HOSTS"):
            await http.token("http://auth.example/token", CLIENT, SECRETS)
    assert seen == []


async def test_it_connects_to_the_address_it_checked_and_names_the_host_to_tls_and_in_host(monkeypatch):
    answers = iter([[PUBLIC], ["127.0.0.1"]])  # a name that rebinds between a check and a connection
    monkeypatch.setattr(
        socket,
        "getaddrinfo",
        lambda host, port, *a, **k: [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (ip, port)) for ip in next(answers)],
    )
    seen = []
    token = {"access_token": "t", "token_type": "Bearer"}
    pinned = scripted(seen, {"auth.example/token": token})
    async with OAuthHttp(2, pinned) as http:
        assert (await http.token("https://auth.example/token", CLIENT, SECRETS)).access_token == "t"
    [request] = seen
    assert (request.url.host, request.headers["host"]) == (PUBLIC, "auth.example")
    assert request.extensions["sni_hostname"] == "auth.example"


async def test_discovery_refuses_metadata_that_puts_the_token_endpoint_inside_before_any_post(monkeypatch):
    """A hosted server's metadata named a loopback token endpoint: Connect fails at discovery, nothing is sent."""
    resolving(monkeypatch, {"tracker.example": [PUBLIC], "auth.example": [PUBLIC], "localhost": ["127.0.0.1"]})
    metadata = {
        "issuer": "https://auth.example",
        "authorization_endpoint": "https://auth.example/authorize",
        "token_endpoint": "https://localhost:8000/token",
        "registration_endpoint": "https://auth.example/register",
        "code_challenge_methods_supported": ["S256"],
    }
    routes = {
        "tracker.example/.well-known/oauth-protected-resource/mcp": {
            "resource": "https://tracker.example/mcp",
            "authorization_servers": ["https://auth.example"],
        },
        "auth.example/.well-known/oauth-authorization-server": metadata,
    }
    seen = []
    pinned = scripted(seen, routes)
    async with OAuthHttp(2, pinned) as http:
        with pytest.raises(UpstreamError, match="localhost resolves to 127.0.0.1.*UPSTREAM_ALLOWED_HOSTS"):
            await http.discover("https://tracker.example/mcp", {})
        for field, inside in [
            ("authorization_endpoint", "http://auth.example/authorize"),
            ("registration_endpoint", "https://169.254.169.254/register"),
        ]:
            routes["auth.example/.well-known/oauth-authorization-server"] = metadata | {
                "token_endpoint": "https://auth.example/token",
                field: inside,
            }
            with pytest.raises(UpstreamError, match="UPSTREAM_ALLOWED_HOSTS"):
                await http.discover("https://tracker.example/mcp", {})
    assert {request.method for request in seen} == {"GET"}


async def test_discovery_refuses_a_resource_metadata_url_inside_that_a_challenge_names(monkeypatch):
    resolving(monkeypatch, {"tracker.example": [PUBLIC]})
    seen = []
    pinned = scripted(seen, {})
    async with OAuthHttp(2, pinned) as http:
        with pytest.raises(UpstreamError, match="UPSTREAM_ALLOWED_HOSTS"):
            await http.discover("https://tracker.example/mcp", {"resource_metadata": "https://10.0.0.7/prm"})
    assert seen == []


async def test_two_names_at_one_address_never_share_a_connection(monkeypatch):
    """A connection whose certificate was checked for one name carries no request for another."""
    connections = []

    async def keep_alive(reader, writer):
        connections.append(writer)
        while await reader.readuntil(b"\r\n\r\n"):
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
            await writer.drain()

    server = await asyncio.start_server(keep_alive, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    resolving(monkeypatch, {"as.example": ["127.0.0.1"], "other.example": ["127.0.0.1"]})
    try:
        async with OAuthHttp(5, allowed_hosts=["as.example", "other.example"]) as http:
            for host in ("as.example", "as.example", "other.example"):
                assert await http.get_json(f"http://{host}:{port}/.well-known/x") == {}
        assert len(connections) == 2
    finally:
        for writer in connections:
            writer.close()
        server.close()
        await server.wait_closed()
