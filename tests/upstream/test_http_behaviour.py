"""Streamable HTTP endpoints that misbehave, each in one way, served for real on 127.0.0.1."""

import asyncio
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from approvals.upstream import ServerSpec, UpstreamError, open_session
from tests.fixtures.http_answers import send
from tests.fixtures.servers import free_port

# gunicorn's default keep-alive, the shortest among common HTTP servers.
SERVER_KEEP_ALIVE_SECONDS = 2.0

INITIALIZE_RESULT = {
    "protocolVersion": "2025-06-18",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "scripted", "version": "1"},
}


class Handler(BaseHTTPRequestHandler):
    """A legacy server whose answer to tools/list depends on the path: /500, /404, /html, /sse-slow, ..."""

    def log_message(self, *args):
        pass

    def do_POST(self):
        message = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        method, msg_id = message.get("method"), message.get("id")
        if method == "server/discover":
            return self.reply(404, "text/plain", b"Not Found")
        if method == "initialize":
            version = "2024-11-05" if self.path == "/old" else "2025-06-18"
            return self.json(
                {"jsonrpc": "2.0", "id": msg_id, "result": INITIALIZE_RESULT | {"protocolVersion": version}},
                {"Mcp-Session-Id": "s-1"},
            )
        if self.headers.get("Mcp-Session-Id") != "s-1" or self.headers.get("MCP-Protocol-Version") != "2025-06-18":
            return self.json(
                {
                    "jsonrpc": "2.0",
                    "id": msg_id,
                    "error": {"code": -32600, "message": "session or version header missing"},
                },
                status=400,
            )
        if msg_id is None:
            return self.reply(202, "text/plain", b"")
        route = self.path.strip("/")
        if route == "500":
            return self.reply(500, "text/plain", b"upstream exploded")
        if route == "400":
            return self.json(
                {"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32602, "message": "bad cursor"}}, status=400
            )
        if route == "html":
            return self.reply(200, "text/html", b"<html>hello</html>")
        if route == "redirect":
            return self.reply(307, "text/plain", b"", {"Location": "http://127.0.0.1:1/elsewhere"})
        if route == "sse-garbage":
            return self.reply(200, "text/event-stream", b"data: {not json\n\n")
        if route == "sse-slow":
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            # A real pause, not a wait: the server paces keep-alives, each well within the client's timeout,
            # until the whole answer has taken longer than that timeout.
            for _ in range(6):
                self.wfile.write(b": keep-alive\n\n")
                self.wfile.flush()
                time.sleep(0.2)
            answer = {
                "jsonrpc": "2.0",
                "id": msg_id,
                "result": {"tools": [{"name": "slow", "inputSchema": {"type": "object"}}]},
            }
            self.wfile.write(b"event: message\nid: 1\ndata: " + json.dumps(answer).encode() + b"\n\n")
            return
        if route == "sse-stalls":
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            self.wfile.write(b": one keep-alive, then nothing\n\n")
            self.wfile.flush()
            # A real pause, not a wait: the stall the client must give up on.
            time.sleep(3)
            return
        return self.json({"jsonrpc": "2.0", "id": msg_id, "result": {"tools": []}})

    def do_DELETE(self):
        self.reply(405, "text/plain", b"")

    def json(self, body, headers=None, status=200):
        self.reply(status, "application/json", json.dumps(body).encode(), headers)

    def reply(self, status, content_type, body, headers=None):
        send(self, status, body, {"Content-Type": content_type, **(headers or {})})


class ClosingIdleHandler(Handler):
    """The scripted server with keep-alive, which drops a request that comes on a connection idle for its keep-alive.

    So does a server whose closing of an idle connection crosses the client's next request on it: the
    request is lost unanswered, and to the client that looks like a server failing in the middle of it.
    """

    protocol_version = "HTTP/1.1"
    answered_at = None

    def do_POST(self):
        if self.answered_at is not None and time.monotonic() - self.answered_at >= SERVER_KEEP_ALIVE_SECONDS:
            self.rfile.read(int(self.headers["Content-Length"]))
            self.close_connection = True
            return
        super().do_POST()
        self.answered_at = time.monotonic()


def serving(handler):
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def scripted_url():
    yield from serving(Handler)


@pytest.fixture(scope="module")
def closing_idle_url():
    yield from serving(ClosingIdleHandler)


def spec(url, **changes):
    return ServerSpec(name="scripted", transport="http", url=url, **({"timeout": 2} | changes))


async def list_tools_at(url, **changes):
    async with open_session(spec(url, **changes)) as session:
        return await session.list_tools()


async def test_it_fails_fast_and_retryably_on_a_port_where_nothing_listens():
    started = time.monotonic()
    with pytest.raises(UpstreamError) as caught:
        async with open_session(spec(f"http://127.0.0.1:{free_port()}/mcp")):
            pass
    assert caught.value.retryable and "cannot talk to" in caught.value.message
    assert time.monotonic() - started < 2


async def test_it_falls_back_to_initialize_when_discover_is_refused_and_keeps_the_session(scripted_url):
    # The server refuses any later request that lacks the session id or the negotiated version.
    async with open_session(spec(f"{scripted_url}/ok")) as session:
        assert (session.identity.era, session.identity.revision) == ("legacy", "2025-06-18")
        assert await session.list_tools() == []


async def test_it_refuses_a_server_that_answers_initialize_with_a_version_it_does_not_know(scripted_url):
    with pytest.raises(UpstreamError) as caught:
        await list_tools_at(f"{scripted_url}/old")
    assert "protocol version '2024-11-05'" in caught.value.message and not caught.value.retryable


async def test_it_treats_a_5xx_as_retryable(scripted_url):
    with pytest.raises(UpstreamError) as caught:
        await list_tools_at(f"{scripted_url}/500")
    assert caught.value.retryable and "HTTP 500" in caught.value.message


async def test_it_reports_a_json_rpc_error_in_a_4xx_with_its_code_and_not_retryable(scripted_url):
    with pytest.raises(UpstreamError) as caught:
        await list_tools_at(f"{scripted_url}/400")
    assert (caught.value.code, caught.value.retryable) == (-32602, False)
    assert "bad cursor" in caught.value.message


@pytest.mark.parametrize(
    "route, words",
    [
        ("html", "content type 'text/html'"),
        ("redirect", "redirects are not followed"),
        ("sse-garbage", "malformed message"),
    ],
)
async def test_it_refuses_answers_that_are_no_mcp_message(scripted_url, route, words):
    with pytest.raises(UpstreamError) as caught:
        await list_tools_at(f"{scripted_url}/{route}")
    assert words in caught.value.message and not caught.value.retryable


async def test_it_waits_through_keep_alive_comments_longer_than_its_timeout_in_all(scripted_url):
    tools = await list_tools_at(f"{scripted_url}/sse-slow", timeout=0.6)
    assert [tool["name"] for tool in tools] == ["slow"]


async def test_it_times_out_a_stream_that_falls_silent(scripted_url):
    started = time.monotonic()
    with pytest.raises(UpstreamError) as caught:
        await list_tools_at(f"{scripted_url}/sse-stalls", timeout=0.5)
    assert caught.value.retryable and "within 0.5s" in caught.value.message
    assert time.monotonic() - started < 2.5


async def test_it_sends_no_request_on_a_connection_the_server_may_be_closing_for_idleness(closing_idle_url):
    async with open_session(spec(f"{closing_idle_url}/ok")) as session:
        assert await session.list_tools() == []
        # A real pause, not a wait: the connection's idleness is what is tested, and a longer one tests it as well.
        await asyncio.sleep(SERVER_KEEP_ALIVE_SECONDS)
        assert await session.list_tools() == []
