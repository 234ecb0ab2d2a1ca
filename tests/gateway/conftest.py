"""A live console with the demo server as its upstream, client tokens, and ways to reach /mcp."""

import shlex
import sys

import httpx
import pytest
from django.contrib.auth.models import User
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from approvals.catalog import servers, sync
from approvals.tokens import credentials

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
DEMO_COMMAND = shlex.join([sys.executable, "-m", "approvals.demo.server"])


@pytest.fixture
def mcp_url(live_console):
    return live_console + "/mcp"


def add_synced_server(name, **options):
    server = servers.add_server(name=name, schedule_sync=False, accept_tools=True, **options)
    report = sync.sync_server(server)
    assert report.ok, report.error
    return server


@pytest.fixture
def demo_server(transactional_db):
    """The demo server over stdio, synced: its tools are exposed as demo_<name>."""
    return add_synced_server("demo", transport="stdio", command=DEMO_COMMAND)


@pytest.fixture
def secret(transactional_db):
    """The secret of a client token that may use every tool."""
    return credentials.create_token("test client")[1]


@pytest.fixture
def operator(transactional_db):
    return User.objects.create_user("olivia", password="unused-password-1")


def sdk_client(mcp_url, secret, mode="auto", **options) -> Client:
    """The official SDK client over Streamable HTTP, carrying the token on every request."""
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {secret}"})
    return Client(streamable_http_client(mcp_url, http_client=http), mode=mode, **options)


def modern_envelope(**params) -> dict:
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw-test", "version": "0"},
    }
    return {**params, "_meta": meta}


class Raw:
    """Plain HTTP to /mcp, for what an SDK client never sends."""

    def __init__(self, url, secret=None):
        self.url = url
        self.headers = {"Accept": "application/json, text/event-stream"}
        if secret is not None:
            self.headers["Authorization"] = f"Bearer {secret}"
        self.client = httpx.Client(timeout=30)

    def post(self, body, headers=None, **options) -> httpx.Response:
        """Posts a JSON value, or raw bytes, or an iterator of bytes (sent chunked)."""
        send = {"json": body} if isinstance(body, (dict, list, str, int)) else {"content": body}
        merged = {**self.headers, "Content-Type": "application/json", **(headers or {})}
        return self.client.post(self.url, headers=merged, **send, **options)

    def modern(self, method, msg_id=1, headers=None, **params) -> httpx.Response:
        routing = {"MCP-Protocol-Version": MODERN, "Mcp-Method": method}
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
