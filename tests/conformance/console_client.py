"""The console as the client under test, for the conformance suite's client scenarios.

    node conformance client --command "python tests/conformance/console_client.py" --scenario tools_call

The CLI starts its mock MCP server and runs this command with the server's URL
as the last argument. This adds that URL as an upstream server of the console
(in the database the test set up: SQLITE_PATH or DATABASE_URL), syncs it, and
calls each of its tools through the console's /mcp (CONSOLE_MCP_URL, a daphne
the test started with an allow-all rule), so that every message the mock sees
comes from the console's upstream client.

The console's operators answer what the server asks during a call. Here an
operator accepts each form exactly as it is shown, prefilled with the schema's
defaults: that is what elicitation-sep1034-client-defaults checks.
"""

import asyncio
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# How often the stand-in operator looks for forms to answer, until the calls are done.
ANSWER_POLL_SECONDS = 0.1


def setup_django():
    sys.path.insert(0, str(REPO))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")
    from tests.conformance import console_oauth

    os.environ.setdefault("OAUTH_CLIENT_METADATA_URL", console_oauth.SUITE_CIMD_URL)
    import django

    django.setup()


def add_upstream(url: str, scenario: str, console_base: str):
    """The mock as an upstream server, synced; one that requires OAuth connected first, as an admin would."""
    from approvals.actions.servers import add_server
    from approvals.catalog.sync import sync_server
    from tests.conformance import console_oauth

    server = add_server(
        name=f"conformance {scenario}",
        transport="http",
        url=url,
        tool_prefix="",
        accept_tools=True,
        schedule_sync=False,
        **console_oauth.server_options(scenario),
    )
    report = sync_server(server)
    console_oauth.connect_while_needed(server, console_base)
    server.refresh_from_db()
    if not report.ok and not server.last_sync_at:
        print(f"the console could not sync {url}: {server.last_error or report.error}")
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
    from django.contrib.auth.models import User

    from approvals.inputs import requests
    from approvals.inputs.models import InputRequest
    from approvals.protocol.elicitation import defaults

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
    from asgiref.sync import sync_to_async

    while not stop.is_set():
        await sync_to_async(accept_with_defaults)(server)
        await asyncio.sleep(ANSWER_POLL_SECONDS)


async def call_every_tool(console_url: str, server):
    from asgiref.sync import sync_to_async
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    from tests.conformance import console_oauth

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
                    print("connect:", (await sync_to_async(console_oauth.connect)(server, base))[:300])
                print(f"{tool.name}: {'error: ' if result.is_error else ''}{text}")
    finally:
        stop.set()
        await operator


def main():
    server_url = sys.argv[-1]
    setup_django()
    from approvals.actions.servers import delete_server
    from tests.conformance import console_oauth

    console_base = console_oauth.console_base(os.environ["CONSOLE_MCP_URL"])
    server = add_upstream(server_url, os.environ.get("MCP_CONFORMANCE_SCENARIO", "scenario"), console_base)
    asyncio.run(call_every_tool(os.environ["CONSOLE_MCP_URL"], server))
    # Done with the mock, as an admin deleting the server would be: the console closes its session to it (a stream
    # it listens on included), which the CLI waits for before it ends the scenario.
    delete_server(server)


if __name__ == "__main__":
    main()
