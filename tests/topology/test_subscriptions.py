"""Resource subscriptions across two web processes sharing PostgreSQL and Redis.

A legacy client's session lives in the database, so its requests may reach any
process: here it holds its GET stream on one, and subscribes and touches the
resource through the other. The upstream's update arrives in the process whose
upstream session subscribed, and crosses to the stream through the channel layer.
"""

import asyncio
import json
import os
import shlex
import sys

import httpx
import pytest

from approvals.actions import servers
from approvals.catalog import sync
from approvals.policy.models import PolicyRule
from approvals.tokens.credentials import create_token
from tests.fixtures.processes import web_process
from tests.fixtures.servers import SERVERS, free_port

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

WATCHED = "test://watched-resource"
VERSION = "2025-11-25"


@pytest.fixture
def redis_required():
    if not os.environ.get("REDIS_URL"):
        pytest.skip("REDIS_URL is not set: processes share news only through Redis")


def request(method: str, number: int, **params) -> dict:
    return {"jsonrpc": "2.0", "id": number, "method": method, "params": params}


async def next_message(lines, method: str) -> dict:
    """The next message of `method` on an SSE stream, skipping comments and others."""
    async for line in lines:
        if line.startswith("data: ") and (message := json.loads(line[6:])).get("method") == method:
            return message
    raise AssertionError(f"the stream ended before any {method}")


def test_an_update_heard_in_one_process_reaches_the_stream_another_holds(redis_required):
    _, secret = create_token("agent")
    server = servers.add_server(
        name="Conformance",
        transport="stdio",
        command=shlex.join([sys.executable, str(SERVERS / "conformance_upstream.py")]),
        tool_prefix="",
        accept_tools=True,
        schedule_sync=False,
    )
    assert sync.sync_server(server).ok
    PolicyRule.objects.create(name="touch", action=PolicyRule.Action.ALLOW, tool_glob="touch_watched_resource")
    holding, subscribing = free_port(), free_port()

    async def subscribe_through_one_and_listen_on_the_other():
        headers = {"Authorization": f"Bearer {secret}", "Accept": "application/json, text/event-stream"}
        async with httpx.AsyncClient(headers=headers, timeout=20) as http:
            first, other = f"http://127.0.0.1:{holding}/mcp", f"http://127.0.0.1:{subscribing}/mcp"
            hello = {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
            opened = await http.post(first, json=request("initialize", 1, **hello))
            session = {"Mcp-Session-Id": opened.headers["Mcp-Session-Id"], "MCP-Protocol-Version": VERSION}
            await http.post(first, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session)
            stream_headers = {**session, "Accept": "text/event-stream"}
            async with http.stream("GET", first, headers=stream_headers) as stream:
                lines = stream.aiter_lines()
                assert (await anext(lines)).startswith(":")  # the stream is open
                subscribe = request("resources/subscribe", 2, uri=WATCHED)
                subscribed = await http.post(other, json=subscribe, headers=session)
                touch = request("tools/call", 3, name="touch_watched_resource", arguments={})
                touched = await http.post(other, json=touch, headers=session)
                update = await asyncio.wait_for(next_message(lines, "notifications/resources/updated"), 15)
            return subscribed.json(), touched, update

    with web_process(holding), web_process(subscribing):
        subscribed, touched, update = asyncio.run(subscribe_through_one_and_listen_on_the_other())
    assert subscribed["result"] == {}
    assert "updated" in touched.text
    assert update["params"] == {"uri": WATCHED}
