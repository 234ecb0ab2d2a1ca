"""A call answered on an event stream, against a scripted legacy server on 127.0.0.1 that keeps its connections
alive: the connection serves the next call once the stream ends after its answer, and a stream that stays open is
closed soon after it."""

import asyncio
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from approvals.upstream import ServerSpec, open_session
from tests.fixtures.http_answers import legacy_request, send_json
from tests.fixtures.waiting import eventually

INITIALIZE_RESULT = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "s"}}
# How long the server of /open holds a stream after its answer unless the client closes it first.
HOLD_SECONDS = 10


class Server(BaseHTTPRequestHandler):
    """A legacy server with keep-alive. tools/call is answered on a chunked event stream, which on /ends ends a
    moment after the answer and on /open stays open. `calls` keeps each tools/call's client port, `closed` when
    the client closed a stream left open."""

    protocol_version = "HTTP/1.1"
    calls: list
    closed: list

    def log_message(self, *args):
        pass

    def do_POST(self):
        message = legacy_request(self)
        if message is None:
            return
        method, number = message["method"], message["id"]
        if method == "initialize":
            return send_json(self, 200, {"jsonrpc": "2.0", "id": number, "result": INITIALIZE_RESULT})
        self.calls.append(self.client_address[1])
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        answer = {"jsonrpc": "2.0", "id": number, "result": {"content": [{"type": "text", "text": "done"}]}}
        self.chunk(b"event: message\ndata: " + json.dumps(answer).encode() + b"\n\n")
        if self.path == "/ends":
            # A real pause, not a wait: the client has the answer before the stream's end.
            time.sleep(0.05)
            return self.chunk(b"")
        self.connection.settimeout(HOLD_SECONDS)
        try:
            if self.connection.recv(1) == b"":
                self.closed.append(time.monotonic())
        except (TimeoutError, OSError):
            pass
        self.close_connection = True

    def chunk(self, data: bytes):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()


@pytest.fixture
def upstream():
    calls, closed = [], []
    handler = type("Scripted", (Server,), {"calls": calls, "closed": closed})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", calls, closed
    server.shutdown()
    server.server_close()


def spec(url):
    return ServerSpec(name="scripted", transport="http", url=url, timeout=HOLD_SECONDS)


async def test_it_calls_again_on_the_connection_whose_stream_ended_after_its_answer(upstream):
    url, calls, _ = upstream
    async with open_session(spec(f"{url}/ends")) as session:
        for _ in range(3):
            assert (await session.call_tool("any", {}))["content"][0]["text"] == "done"
            # A real pause, not a wait: the stream ends meanwhile, as the server's next stream would.
            await asyncio.sleep(0.1)
    assert len(calls) == 3 and len(set(calls)) == 1


async def test_it_answers_at_once_from_a_stream_left_open_and_closes_it_soon_after(upstream):
    url, calls, closed = upstream
    async with open_session(spec(f"{url}/open")) as session:
        started = time.monotonic()
        assert (await session.call_tool("any", {}))["content"][0]["text"] == "done"
        assert time.monotonic() - started < HOLD_SECONDS / 2
        # Closed by the client, long before the server would end it.
        await eventually(lambda: closed, timeout=HOLD_SECONDS / 2)
        # The next call has a connection of its own, and its stream, left open too, is closed with the session.
        assert (await session.call_tool("any", {}))["content"][0]["text"] == "done"
    await eventually(lambda: len(closed) == 2, timeout=HOLD_SECONDS / 2)
    assert len(calls) == 2 and len(set(calls)) == 2
