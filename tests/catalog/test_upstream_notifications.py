import asyncio
import json
import shlex
import sys
import time
from pathlib import Path

import pytest
from asgiref.sync import sync_to_async

from approvals.actions import servers
from approvals.catalog import sync
from approvals.catalog.models import Tool
from approvals.catalog.surface_models import Resource
from approvals.catalog.upstream_notifications import watch
from tests.fixtures.waiting import eventually

SCRIPTED = Path(__file__).with_name("scripted_server.py")
pytestmark = pytest.mark.django_db(transaction=True)
# Long enough that the burst of notifications all lands in it on a loaded machine.
COALESCING_WINDOW_SECONDS = 1.5


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


async def test_it_coalesces_a_burst_of_list_changes_into_one_sync_now_and_one_after_the_window(settings, monkeypatch):
    from django.core.cache import cache

    from approvals.catalog import upstream_notifications as watching
    from approvals.upstream import ServerSpec

    settings.SYNC_MIN_SECONDS = COALESCING_WINDOW_SECONDS
    server = await sync_to_async(servers.add_server)(
        name="Chatty", transport="stdio", command="true", schedule_sync=False
    )
    await sync_to_async(cache.delete)(f"sync-window:{server.pk}")
    enqueued = []
    monkeypatch.setattr(sync, "enqueue_sync", lambda synced: enqueued.append(time.monotonic()))
    spec = ServerSpec(name="Chatty", transport="stdio")
    started = time.monotonic()
    for _ in range(20):
        await watching.on_upstream_notification(spec, "notifications/tools/list_changed", {})
    assert len(enqueued) == 1 and watching.waiting("Chatty")
    await eventually(lambda: len(enqueued) == 2 and not watching.waiting("Chatty"), timeout=15)
    assert enqueued[1] - started >= COALESCING_WINDOW_SECONDS - 0.1
    await asyncio.sleep(0.5)
    assert len(enqueued) == 2


async def test_it_waits_for_a_sync_under_way_before_the_next(settings, monkeypatch):
    from django.core.cache import cache

    settings.SYNC_MIN_SECONDS = 0
    server = await sync_to_async(servers.add_server)(
        name="Busy", transport="stdio", command="true", schedule_sync=False
    )
    enqueued = []
    monkeypatch.setattr(sync, "enqueue_sync", enqueued.append)
    await sync_to_async(cache.set)(sync.running_key(server.pk), True, 30)
    try:
        assert await sync_to_async(sync.sync_when_due)(server) >= 1 and enqueued == []
    finally:
        await sync_to_async(cache.delete)(sync.running_key(server.pk))
    assert await sync_to_async(sync.sync_when_due)(server) == 0 and len(enqueued) == 1
