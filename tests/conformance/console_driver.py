"""The console's part in the client scenarios, played in the test process for console_client.py.

For each scenario the CLI runs console_client.py, which posts the mock server's URL, the scenario and its
context here. This adds that URL as an upstream server of the console (in the test database), syncs it, and
calls each of its tools through the console's /mcp (a web process the test started with an allow-all rule), so
that every message the mock sees comes from the console's upstream client. What it would have printed goes
back to console_client.py, which prints it for the CLI.

The console's operators answer what the server asks during a call. Here an operator accepts each form exactly
as it is shown, prefilled with the schema's defaults: that is what elicitation-sep1034-client-defaults checks.
"""

import asyncio
import json
import threading
import traceback
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, HTTPServer

from asgiref.sync import sync_to_async
from django.contrib.auth.models import User
from django.db import connections
from django.test import override_settings
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from approvals.actions.servers import add_server, delete_server
from approvals.catalog.sync import sync_server
from approvals.inputs import requests
from approvals.inputs.models import InputRequest
from approvals.protocol.elicitation import defaults
from tests.conformance import console_oauth

# How often the stand-in operator looks for forms to answer, until the calls are done.
ANSWER_POLL_SECONDS = 0.1


class Output:
    """What a scenario's client prints, kept for console_client.py to print."""

    def __init__(self):
        self.lines = []

    def __call__(self, *parts):
        self.lines.append(" ".join(str(part) for part in parts))

    def text(self) -> str:
        return "".join(f"{line}\n" for line in self.lines)


def add_upstream(url: str, scenario: str, context: dict, console_base: str, say: Output):
    """The mock as an upstream server, synced; one that requires OAuth connected first, as an admin would."""
    server = add_server(
        name=f"conformance {scenario}",
        transport="http",
        url=url,
        tool_prefix="",
        accept_tools=True,
        schedule_sync=False,
        **console_oauth.server_options(scenario, context),
    )
    report = sync_server(server)
    console_oauth.connect_while_needed(server, console_base, say)
    server.refresh_from_db()
    if not report.ok and not server.last_sync_at:
        say(f"the console could not sync {url}: {server.last_error or report.error}")
    return server


def sample_arguments(schema: dict) -> dict:
    """A value of the right type for each required argument: the mock servers check calls arrive, not values."""
    samples = {"number": 1, "integer": 1, "string": "conformance", "boolean": True, "array": [], "object": {}}
    properties = schema.get("properties") or {}
    return {
        name: samples.get(properties.get(name, {}).get("type"), "conformance") for name in schema.get("required") or []
    }


def accept_with_defaults(server) -> int:
    """An operator accepting every pending form of this server's calls as prefilled, and writing a reply to each
    sampling request in the model's place; how many it answered."""
    operator, _ = User.objects.get_or_create(username="conformance-operator")
    pending = InputRequest.objects.filter(server=server, status=InputRequest.Status.PENDING, routed_to="operator")
    answered = 0
    for request in pending:
        content = defaults(requests.requested_schema(request)) if request.mode == InputRequest.Mode.FORM else None
        if request.method == requests.SAMPLE:
            content = {"text": "conformance"}
        answered += requests.answer(request.pk, operator, "accept", content).won
    return answered


async def operate(server, stop: asyncio.Event):
    while not stop.is_set():
        await sync_to_async(accept_with_defaults)(server)
        await asyncio.sleep(ANSWER_POLL_SECONDS)


async def call_every_tool(console_url: str, server, say: Output):
    theirs = set(await sync_to_async(lambda: list(server.active_tools().values_list("exposed_name", flat=True)))())
    stop = asyncio.Event()
    operator = asyncio.create_task(operate(server, stop))
    try:
        async with Client(streamable_http_client(console_url)) as client:
            for tool in (await client.list_tools()).tools:
                if tool.name not in theirs:
                    continue
                for _ in range(console_oauth.MAX_CONNECTS):
                    result = await client.call_tool(tool.name, sample_arguments(tool.input_schema))
                    text = " ".join(getattr(block, "text", "") for block in result.content)
                    if not (result.is_error and console_oauth.needs_authorization(text)):
                        break
                    # A step-up: the admin connects again with the scope the server asked for, and calls again.
                    base = console_oauth.console_base(console_url)
                    say("connect:", (await sync_to_async(console_oauth.connect)(server, base))[:300])
                say(f"{tool.name}: {'error: ' if result.is_error else ''}{text}")
    finally:
        stop.set()
        await operator
        # The thread sync_to_async ran these in outlives the scenario.
        await sync_to_async(connections.close_all)()


def play(console_url: str, server_url: str, scenario: str, context: dict, say: Output) -> None:
    console_base = console_oauth.console_base(console_url)
    with override_settings(OAUTH_CLIENT_METADATA_URL=console_oauth.SUITE_CIMD_URL):
        server = add_upstream(server_url, scenario, context, console_base, say)
        asyncio.run(call_every_tool(console_url, server, say))
    # Done with the mock, as an admin deleting the server would be: the console closes its session to it (a stream
    # it listens on included), which the CLI waits for before it ends the scenario.
    delete_server(server)


def driver_for(console_url: str):
    class Driver(BaseHTTPRequestHandler):
        def do_POST(self):
            order = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            say, status = Output(), 0
            try:
                play(console_url, order["server_url"], order["scenario"], console_oauth.context(order["context"]), say)
            except Exception:
                say(traceback.format_exc())
                status = 1
            finally:
                connections.close_all()
            body = json.dumps({"output": say.text(), "status": status}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format, *args):
            pass

    return Driver


@contextmanager
def console_driver(console_url: str):
    """The driver's URL on loopback, for CONSOLE_CLIENT_DRIVER, serving one scenario at a time until the block ends."""
    httpd = HTTPServer(("127.0.0.1", 0), driver_for(console_url))
    thread = threading.Thread(target=httpd.serve_forever, name="conformance client driver", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_port}/"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()
