"""What the HTTP client under the Streamable HTTP transport carries and refuses, against a scripted legacy server on
127.0.0.1: cookies, redirects, a quiet GET stream, a long wait of the console's own, TLS, proxies, and its closing."""

import asyncio
import json
import queue
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from approvals.upstream import ServerSpec, SessionPool, UpstreamError, open_session
from approvals.upstream.outbound import tls_context
from tests.fixtures.http_answers import send, send_json
from tests.fixtures.waiting import eventually
from tests.oauth.certificates import self_signed_context

TIMEOUT = 0.5
RESULTS = {
    "initialize": {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "s"}},
    "tools/list": {"tools": [{"name": "ask", "inputSchema": {"type": "object"}}]},
}


class Server(BaseHTTPRequestHandler):
    """A legacy server; the path picks its quirk. `seen` keeps (verb, path, JSON-RPC method, Cookie) of each request;
    `replies` what the client answered to the server's own requests; `hush` ends the silences."""

    seen: list
    replies: queue.Queue
    hush: threading.Event

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.seen.append(("GET", self.path, None, self.headers.get("Cookie")))
        if not self.path.endswith("/quiet"):
            return send(self, 405)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        self.wfile.flush()
        self.hush.wait(10)  # a stream that stays open and says nothing

    def do_POST(self):
        message = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        method, number = message.get("method"), message.get("id")
        self.seen.append(("POST", self.path, method, self.headers.get("Cookie")))
        if method is None:
            self.replies.put(message)
            return send(self, 202)
        if method == "server/discover":
            return send(self, 404)
        if number is None:
            return send(self, 202)
        if method == "tools/list" and self.path.endswith("/redirect"):
            return send(self, 307, b"", {"Location": self.path.replace("/redirect", "/elsewhere")})
        if method == "tools/call":
            return self.ask_then_answer(number)
        headers = {"Mcp-Session-Id": "s-1"}
        if method == "initialize":
            headers["Set-Cookie"] = "route=b"  # a load balancer's sticky session
        send_json(self, 200, {"jsonrpc": "2.0", "id": number, "result": RESULTS[method]}, headers)

    def ask_then_answer(self, number):
        """An elicitation on the call's stream, then silence until the client answers it, then the call's result."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        ask = {"jsonrpc": "2.0", "id": "e1", "method": "elicitation/create", "params": {"message": "sure?"}}
        self.event(ask)
        reply = self.replies.get(timeout=10)
        self.event({"jsonrpc": "2.0", "id": number, "result": {"content": [], "action": reply["result"]["action"]}})

    def event(self, message):
        self.wfile.write(b"event: message\ndata: " + json.dumps(message).encode() + b"\n\n")
        self.wfile.flush()


def serving(tls=None):
    seen, hush = [], threading.Event()
    handler = type("Scripted", (Server,), {"seen": seen, "replies": queue.Queue(), "hush": hush})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    scheme = "https" if tls is not None else "http"
    yield f"{scheme}://127.0.0.1:{server.server_address[1]}", seen
    hush.set()
    server.shutdown()
    server.server_close()


@pytest.fixture
def upstream():
    yield from serving()


@pytest.fixture
def tls_upstream(tmp_path):
    """The server over https, with a certificate of its own that nothing trusts unless SSL_CERT_FILE names it."""
    tls_context.cache_clear()
    for url, _ in serving(self_signed_context(tmp_path)):
        yield url, tmp_path / "cert.pem"
    tls_context.cache_clear()


def spec(url, **changes):
    return ServerSpec(name="scripted", transport="http", url=url, **({"timeout": TIMEOUT} | changes))


async def test_it_keeps_a_cookie_from_an_upstream_on_an_ip_address_for_its_own_session(upstream):
    url, seen = upstream
    for _ in range(2):
        async with open_session(spec(f"{url}/mcp")) as session:
            await session.list_tools()
    cookies = [cookie for _, _, method, cookie in seen if method in ("initialize", "tools/list")]
    # Each session's first request carries none; every later one the cookie its session was given.
    assert cookies == [None, "route=b", None, "route=b"]


async def test_it_follows_no_redirect(upstream):
    url, seen = upstream
    with pytest.raises(UpstreamError) as caught:
        async with open_session(spec(f"{url}/redirect")) as session:
            await session.list_tools()
    assert "redirected to '/elsewhere'; redirects are not followed" in caught.value.message
    assert not [path for _, path, _, _ in seen if path == "/elsewhere"]


async def test_it_opens_a_quiet_get_stream_again_once_its_timeout_passes(upstream):
    url, seen = upstream

    async def heard(method, params):
        pass

    async with open_session(spec(f"{url}/quiet"), on_notification=heard):
        # The server holds the first stream open and silent for far longer than this.
        await eventually(lambda: len([verb for verb, *_ in seen if verb == "GET"]) >= 2, timeout=5)


async def test_it_waits_on_the_consoles_own_answer_longer_than_the_timeout_while_the_stream_is_silent(upstream):
    url, _ = upstream

    async def operator(method, params):
        await asyncio.sleep(3 * TIMEOUT)  # a person deciding; the server waits for the answer, silent
        return {"action": "accept"}

    async with open_session(spec(f"{url}/mcp")) as session:
        result = await session.call_tool("ask", {}, on_request=operator)
    assert result["action"] == "accept"


async def test_it_closes_its_connections_with_the_session_and_with_its_pool(upstream):
    url, _ = upstream
    async with open_session(spec(f"{url}/mcp")) as session:
        await session.list_tools()
        client = session._transport._client
        assert not client.closed
    assert client.closed
    pool = SessionPool()
    client = (await pool.get(spec(f"{url}/mcp")))._transport._client
    await pool.close_all()
    assert client.closed


async def test_it_refuses_a_certificate_nothing_trusts(tls_upstream):
    url, _ = tls_upstream
    with pytest.raises(UpstreamError) as caught:
        async with open_session(spec(f"{url}/mcp", timeout=5)):
            pass
    assert caught.value.retryable and "certificate verify failed" in caught.value.message


async def test_it_trusts_the_certificates_ssl_cert_file_names(tls_upstream, monkeypatch):
    url, certificate = tls_upstream
    monkeypatch.setenv("SSL_CERT_FILE", str(certificate))
    async with open_session(spec(f"{url}/mcp", timeout=5)) as session:
        assert [tool["name"] for tool in await session.list_tools()] == ["ask"]


async def test_it_goes_through_the_proxy_the_environment_names(upstream, monkeypatch):
    proxy, seen = upstream
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "HTTPS_PROXY", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", proxy)
    # A host nobody can resolve: only the proxy reaches it.
    async with open_session(spec("http://upstream.invalid/mcp")) as session:
        await session.list_tools()
    assert {path for _, path, _, _ in seen} == {"http://upstream.invalid/mcp"}
