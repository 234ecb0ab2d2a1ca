"""Traces: a web process sends each call's spans over OTLP, continuing the client's trace into the upstream's."""

import asyncio
import subprocess
import sys
from http.server import BaseHTTPRequestHandler

import httpx
import pytest

from approvals.actions import servers
from approvals.calls.models import Call
from approvals.catalog import sync
from approvals.policy.models import PolicyRule
from approvals.tokens.credentials import create_token
from tests.fixtures.http_answers import legacy_request, send, send_json
from tests.fixtures.people import make_user
from tests.fixtures.processes import web_process
from tests.fixtures.servers import REPO, free_port
from tests.fixtures.waiting import eventually, wait_until
from tests.observe.otlp import Collector, serving
from tests.observe.scraping import decide

pytestmark = pytest.mark.django_db(transaction=True)

ORDER = ["console.receive", "console.policy", "console.forward", "console.record"]
HELD_ORDER = ["console.receive", "console.policy", "console.hold", "console.forward", "console.record"]


class Upstream(BaseHTTPRequestHandler):
    """A legacy-era MCP server with one tool, echo, keeping the traceparent of every tools/call."""

    traceparents: list[str]

    def log_message(self, *args):
        pass

    def do_GET(self):
        send(self, 405)

    def do_POST(self):
        message = legacy_request(self)
        if message is None:
            return
        method, number = message["method"], message["id"]
        result = {
            "initialize": {
                "protocolVersion": "2025-06-18",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "echo", "version": "1"},
            },
            "tools/list": {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]},
        }.get(method)
        if method == "tools/call":
            self.traceparents.append(self.headers.get("traceparent", ""))
            result = {"content": [{"type": "text", "text": "echo"}]}
        send_json(self, 200, {"jsonrpc": "2.0", "id": number, "result": result}, {"Mcp-Session-Id": "s-1"})


def traceparent(trace_id: str) -> str:
    return f"00-{trace_id}-b7ad6b7169203331-01"


async def call_echo(port: int, secret: str, trace_id: str) -> dict:
    headers = {"Authorization": f"Bearer {secret}", "Accept": "application/json", "traceparent": traceparent(trace_id)}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo_echo", "arguments": {}}}
    async with httpx.AsyncClient(timeout=60) as http:
        initialized = await http.post(
            f"http://127.0.0.1:{port}/mcp",
            headers=headers,
            json={
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "0"},
                },
            },
        )
        session = {"Mcp-Session-Id": initialized.headers["Mcp-Session-Id"], "MCP-Protocol-Version": "2025-06-18"}
        response = await http.post(f"http://127.0.0.1:{port}/mcp", headers=headers | session, json=body)
    assert response.status_code == 200, response.text
    return response.json()["result"]


def console_spans(collected, trace_id: str) -> list[str]:
    ours = sorted(
        (span.start_time_unix_nano, span.name)
        for span in collected
        if span.trace_id.hex() == trace_id and span.name.startswith("console.")
    )
    return [name for _, name in ours]


def test_it_sends_one_trace_per_call_continuing_the_clients_and_passes_it_upstream(tmp_path, client):
    make_user("ann", superuser=True)
    allowed, allowed_secret = create_token("allowed")
    _, asked_secret = create_token("asked")
    PolicyRule.objects.create(name="allowed", action="allow", tool_glob="*", client=allowed)
    spans, traceparents = [], []
    with serving(Collector, spans=spans) as collector, serving(Upstream, traceparents=traceparents) as upstream:
        server = servers.add_server(
            name="Echo",
            transport="http",
            url=f"http://127.0.0.1:{upstream}/mcp",
            accept_tools=True,
            schedule_sync=False,
        )
        assert sync.sync_server(server).ok
        env = {"OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{collector}", "OTEL_BSP_SCHEDULE_DELAY": "100"}
        quick, held = "a" * 31 + "1", "b" * 31 + "2"
        port = free_port()
        with web_process(port, {**env, "PROMETHEUS_MULTIPROC_DIR": str(tmp_path)}):

            async def both():
                waiting = asyncio.ensure_future(call_echo(port, asked_secret, held))
                assert not (await call_echo(port, allowed_secret, quick)).get("isError")
                pending = Call.objects.filter(status=Call.Status.PENDING)
                await eventually(pending.aexists, message="the held call")
                await asyncio.to_thread(decide, (await pending.aget()).pk, str(tmp_path))
                assert not (await asyncio.wait_for(waiting, 30)).get("isError")

            asyncio.run(both())
            # The pages run Django's middleware, and with it Django's instrumentation.
            assert httpx.get(f"http://127.0.0.1:{port}/login/").status_code == 200
            wait_until(lambda: console_spans(spans, held)[-1:] == ["console.record"], message="the held call's spans")
            wait_until(lambda: console_spans(spans, quick)[-1:] == ["console.record"], message="the quick call's spans")
    assert console_spans(spans, quick) == ORDER
    assert console_spans(spans, held) == HELD_ORDER
    assert sorted(parent.split("-")[1] for parent in traceparents) == [quick, held]
    client.force_login(make_user("operator", superuser=True))
    page = client.get(f"/calls/{Call.objects.get(token=allowed).pk}/").content.decode()
    assert f"<code data-trace-id>{quick}</code>" in page


# redis-py loads OpenTelemetry's metrics SDK (and with it the tracing API) whenever it is installed, for a
# feature of its own that stays off: what must stay out is the console's tracing, its SDK, exporter and instruments.
UNTRACED = """
import sys
from http.server import BaseHTTPRequestHandler
import console.asgi
from approvals.observe import traces
ours = ("opentelemetry.sdk.trace", "opentelemetry.exporter", "opentelemetry.instrumentation")
print(sorted(name for name in sys.modules if name.startswith(ours)), traces.span("receive"))
"""


def test_it_loads_no_tracing_without_a_collector():
    env = {"PATH": "/usr/bin:/bin", "DJANGO_SETTINGS_MODULE": "console.settings"}
    probe = subprocess.run(
        [sys.executable, "-c", UNTRACED], cwd=REPO, env=env, capture_output=True, text=True, timeout=60
    )
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.startswith("[] <contextlib.nullcontext"), probe.stdout
