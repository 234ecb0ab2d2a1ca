import asyncio
import json
import shlex
import sys
from pathlib import Path

import pytest
from asgiref.sync import sync_to_async

from approvals.actions import servers
from approvals.catalog import sync
from approvals.catalog.models import Resource, Tool
from approvals.catalog.watch import watch
from tests.fixtures.waiting import eventually

SCRIPTED = Path(__file__).with_name("scripted_server.py")
pytestmark = pytest.mark.django_db(transaction=True)


def tool(name):
    return {"name": name, "inputSchema": {"type": "object"}}


async def test_it_syncs_a_server_that_announces_a_changed_tool_list(tmp_path):
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps({"pages": [[tool("a")]]}))
    server = await sync_to_async(servers.add_server)(
        name="Announcer",
        transport="stdio",
        accept_tools=True,
        schedule_sync=False,
        command=shlex.join([sys.executable, str(SCRIPTED), str(scenario)]),
    )
    assert (await sync_to_async(sync.sync_server)(server)).ok
    scenario.write_text(json.dumps({"pages": [[tool("a"), tool("b")]], "announce": True}))
    stop = asyncio.Event()
    watching = asyncio.create_task(watch(stop, interval=0.2))
    try:
        # A tool that appears after the first listing waits for an admin's review.
        synced = Tool.objects.filter(server=server, upstream_name="b", status="needs_review")
        await eventually(synced.aexists, timeout=10, message="the announced change synced")
    finally:
        stop.set()
        await asyncio.wait_for(watching, 10)


async def test_it_syncs_a_server_that_announces_a_changed_resource_list(tmp_path):
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps({"pages": [[]], "resources": [{"uri": "a://1", "name": "one"}]}))
    server = await sync_to_async(servers.add_server)(
        name="Resources",
        transport="stdio",
        schedule_sync=False,
        command=shlex.join([sys.executable, str(SCRIPTED), str(scenario)]),
    )
    assert (await sync_to_async(sync.sync_server)(server)).ok
    resources = [{"uri": "a://1", "name": "one"}, {"uri": "a://2", "name": "two"}]
    scenario.write_text(
        json.dumps({"pages": [[]], "resources": resources, "announce": "notifications/resources/list_changed"})
    )
    stop = asyncio.Event()
    watching = asyncio.create_task(watch(stop, interval=0.2))
    try:
        synced = Resource.objects.filter(server=server, uri="a://2")
        await eventually(synced.aexists, timeout=10, message="the announced change synced")
    finally:
        stop.set()
        await asyncio.wait_for(watching, 10)
