"""Listening to upstream servers between calls, so a changed tool list is synced at once and updates relayed.

Servers announce `notifications/tools/list_changed` (and the same of resources
and prompts) on a legacy session's stream or a 2026-07-28 listen stream; the
console keeps one session per enabled server open for that (the `watch_servers`
command) and also listens on the sessions it forwards calls on. Servers that
announce nothing are still synced periodically by celery beat. A resource update
a subscribed session hears is passed to the clients' streams, wherever they are.
"""

import asyncio
import contextlib
import logging

from asgiref.sync import sync_to_async

from approvals.catalog import sync
from approvals.catalog.models import Server
from approvals.catalog.specs import upstream_spec
from approvals.live import events
from approvals.protocol.uris import normalized
from approvals.upstream import ServerSpec, SessionPool, UpstreamError
from approvals.upstream_oauth.connections import lister

log = logging.getLogger(__name__)


# Each names a listing the catalog keeps; any of them changing means a sync.
LIST_CHANGES = {
    "notifications/tools/list_changed",
    "notifications/resources/list_changed",
    "notifications/prompts/list_changed",
}


def sync_by_name(name: str) -> float:
    """0 once a sync is enqueued (or the server is gone), else the seconds after which to ask again."""
    server = Server.objects.filter(name=name, enabled=True).first()
    return sync.sync_when_due(server) if server is not None else 0.0


# The servers whose list change waits in this process for a sync to be due: one waiter each, however many come.
WAITING: dict[str, asyncio.Task] = {}


def waiting(name: str) -> bool:
    """Whether a waiter for the server runs on this loop (one left by a loop since closed is no waiter)."""
    task = WAITING.get(name)
    return task is not None and not task.done() and task.get_loop() is asyncio.get_running_loop()


async def sync_later(name: str, wait: float):
    try:
        while wait:
            await asyncio.sleep(wait)
            wait = await sync_to_async(sync_by_name)(name)
    finally:
        WAITING.pop(name, None)


async def on_upstream_notification(spec: ServerSpec, method: str, params: dict):
    if method in LIST_CHANGES:
        if waiting(spec.name):
            return  # the sync it waits for will cover this change too
        log.info("%s: %s; syncing", spec.name, method)
        wait = await sync_to_async(sync_by_name)(spec.name)
        if wait and not waiting(spec.name):
            WAITING[spec.name] = asyncio.create_task(sync_later(spec.name, wait))
    elif method == "notifications/resources/updated" and isinstance(params.get("uri"), str):
        # It arrived in whichever process holds the session that subscribed; the subscribers' streams may be elsewhere.
        # In the normal form its subscribers' URIs were kept in.
        await events.resource_updated(spec.name, normalized(params["uri"]))


def enabled_specs() -> list[ServerSpec]:
    return [upstream_spec(server, lister(server)) for server in Server.objects.filter(enabled=True)]


async def watch(stop: asyncio.Event, interval: float = 30.0):
    """Keep a session open to every enabled server until `stop` is set; reconnect those that die."""
    pool = SessionPool(on_notification=on_upstream_notification)
    try:
        while not stop.is_set():
            specs = await sync_to_async(enabled_specs)()
            # A server disabled or deleted since the last look is watched no more: its stdio child stops.
            await pool.keep_only({spec.name for spec in specs})
            for spec in specs:
                try:
                    await (await pool.get(spec)).ping()
                except UpstreamError as exc:
                    log.warning("%s: not watched: %s", spec.name, exc.message)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(interval):
                    await stop.wait()
    finally:
        await pool.close_all()
