"""Plain HTTP to the live console's /mcp, for what an SDK client never sends; and to the console in this process."""

import httpx
import pytest
from asgiref.sync import async_to_sync

from approvals.protocol.headers import request_headers
from approvals.tokens.credentials import create_token
from tests.fixtures.gateway import LEGACY, MODERN, modern_envelope

# The address the console in this process answers as: one of its ALLOWED_HOSTS, at the port `make run` serves.
IN_PROCESS = "http://127.0.0.1:8000"


class Raw:
    """Plain HTTP to /mcp, for what an SDK client never sends."""

    def __init__(self, url, secret=None, transport=None):
        self.url = url
        self.headers = {"Accept": "application/json, text/event-stream"}
        if secret is not None:
            self.headers["Authorization"] = f"Bearer {secret}"
        self.client = httpx.Client(timeout=30, transport=transport)

    def post(self, body, headers=None, **options) -> httpx.Response:
        """Posts a JSON value, or raw bytes, or an iterator of bytes (sent chunked)."""
        send = {"json": body} if isinstance(body, (dict, list, str, int)) else {"content": body}
        merged = {**self.headers, "Content-Type": "application/json", **(headers or {})}
        return self.client.post(self.url, headers=merged, **send, **options)

    def modern(self, method, msg_id=1, headers=None, **params) -> httpx.Response:
        routing = request_headers(MODERN, method, params)
        if method == "tools/call":
            routing["Mcp-Name"] = params.get("name", "")
        body = {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": modern_envelope(**params)}
        return self.post(body, {**routing, **(headers or {})})

    def initialize(self, version=LEGACY) -> str:
        params = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw-test", "version": "0"}}
        response = self.post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})
        assert response.status_code == 200, response.text
        return response.headers["Mcp-Session-Id"]

    def legacy(self, session_id, method, msg_id=1, headers=None, **params) -> httpx.Response:
        body = {"jsonrpc": "2.0", "method": method, "params": params}
        if msg_id is not None:
            body["id"] = msg_id
        return self.post(body, {"Mcp-Session-Id": session_id, "MCP-Protocol-Version": LEGACY, **(headers or {})})


class Chunks(httpx.AsyncByteStream):
    def __init__(self, chunks):
        self.chunks = chunks

    async def __aiter__(self):
        for chunk in self.chunks:
            yield chunk


class InProcess(httpx.BaseTransport):
    """Sends each request to the console's ASGI application in this process, a body's chunks as they were sent."""

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        from console.asgi import application

        async def send() -> httpx.Response:
            asgi = httpx.ASGITransport(app=application)
            request.stream = Chunks(list(request.stream))
            response = await asgi.handle_async_request(request)
            return httpx.Response(response.status_code, headers=response.headers, content=await response.aread())

        return async_to_sync(send)()


@pytest.fixture
def guarded(db):
    """Raw to /mcp of the console in this process, with a valid token, for what its guard answers (Host, Origin, size).

    The application runs in this thread's transaction: were the guard to let a request through, Django would find
    the token and answer it.
    """
    client = Raw(IN_PROCESS + "/mcp", create_token("test client")[1], transport=InProcess())
    yield client
    client.client.close()


@pytest.fixture
def raw(mcp_url, secret):
    client = Raw(mcp_url, secret)
    yield client
    client.client.close()


@pytest.fixture
def tokenless(mcp_url):
    """Plain HTTP to /mcp without an Authorization header."""
    client = Raw(mcp_url)
    yield client
    client.client.close()
