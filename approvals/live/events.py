"""Channel-layer groups and the small typed events sent through them.

Every send happens after commit, so a listener that re-reads the database on an
event always finds what the event announces.
"""

import asyncio
import contextlib
import hashlib
import logging
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import Future
from contextvars import ContextVar
from datetime import datetime
from typing import TypeVar

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.conf import settings
from django.db import transaction
from django.utils import timezone

OPERATORS = "operators"
CATALOG = "catalog"
# Every event loop holding upstream sessions (calls.runner): close those to a server that was retired.
UPSTREAM = "upstream"
# Per event loop, the layer that has a channel kept open on it (see keep_listening).
_KEPT: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, object]" = weakref.WeakKeyDictionary()
# The event loop serving this request or socket; contextvars follow sync_to_async into worker threads.
SERVING_LOOP: ContextVar[asyncio.AbstractEventLoop | None] = ContextVar("serving_loop", default=None)

log = logging.getLogger(__name__)
T = TypeVar("T")


def call_group(call_id) -> str:
    return f"call.{call_id}"


def input_group(input_id) -> str:
    return f"input.{input_id}"


def user_group(user_id) -> str:
    return f"user.{user_id}"


def session_group(session_key: str) -> str:
    # Hashed: a session key is a credential, and group names are visible to whoever watches Redis.
    return f"session.{hashlib.sha256(session_key.encode()).hexdigest()[:40]}"


def served_by_its_loop(app):
    """ASGI middleware: synchronous code under `app` may hand its event loop work without waiting for it."""

    async def serve(scope, receive, send):
        SERVING_LOOP.set(asyncio.get_running_loop())
        return await app(scope, receive, send)

    return serve


def send_after_commit(*sends: tuple[str, dict]):
    """Send each (group, message) once the transaction commits, all at once.

    Under a web process the event loop sends them while the committing thread goes
    on with its request: the answer to a client never waits for the operators' news.
    Elsewhere (a celery worker, a command) the thread sends and waits.
    """

    async def send_all():
        layer = get_channel_layer()
        await asyncio.gather(*(layer.group_send(group, message) for group, message in sends))

    def send():
        loop = SERVING_LOOP.get()
        if loop is None or loop.is_closed():
            async_to_sync(send_all)()
        else:
            asyncio.run_coroutine_threadsafe(send_all(), loop).add_done_callback(log_failed_send)

    transaction.on_commit(send)


def log_failed_send(future: Future):
    # Nobody awaits these sends; their listeners re-read the database now and then anyway.
    if not future.cancelled() and future.exception() is not None:
        log.error("an event could not be sent to the channel layer", exc_info=future.exception())


class Listener:
    """The messages sent to one group since the listener joined it, one at a time."""

    def __init__(self, layer, group: str, channel: str):
        self.layer, self.group, self.channel = layer, group, channel
        self.receiving = asyncio.ensure_future(layer.receive(channel))

    async def next(self, timeout: float) -> dict | None:
        """The next message, or None when none came within `timeout` seconds.

        The receive stays under way across timeouts: a message arriving between two
        calls waits for the next one instead of being dropped with a cancelled receive.
        """
        done, _ = await asyncio.wait({self.receiving}, timeout=timeout)
        if not done:
            return None
        message = self.receiving.result()
        self.receiving = asyncio.ensure_future(self.layer.receive(self.channel))
        return message

    async def rejoin(self):
        """Join the group again: the Redis layers may forget a member after a day."""
        await self.layer.group_add(self.group, self.channel)

    async def close(self):
        # Cancelling the receive is what lets the Redis pub/sub layer unsubscribe the channel.
        self.receiving.cancel()
        await asyncio.wait({self.receiving})
        await self.layer.group_discard(self.group, self.channel)


@contextlib.asynccontextmanager
async def listening(group: str) -> AsyncIterator[Listener]:
    """A Listener on `group` for the block; it has joined before the block starts, so nothing sent later is missed."""
    layer = get_channel_layer()
    await keep_listening(layer)
    channel = await layer.new_channel()
    await layer.group_add(group, channel)
    listener = Listener(layer, group, channel)
    # Let the receive start, so that its cancellation has something to clean up.
    await asyncio.sleep(0)
    try:
        yield listener
    finally:
        # Never let a failing clean-up hide why the block ended (a cancellation, above all).
        with contextlib.suppress(Exception):
            await listener.close()


async def wait_until(
    group: str,
    look: Callable[[], Awaitable[T | None]],
    deadline: datetime,
    on_deadline: Callable[[], Awaitable] | None = None,
) -> T | None:
    """What `look` finds, or None when `deadline` passes first.

    `look` re-reads what is waited on and returns it once the wait is over, None
    before. It runs at once, after every message to `group`, and at least every
    CALL_REREAD_SECONDS, since a message may be lost; the group is joined before the
    first look, so no change after it goes unnoticed. At the deadline `on_deadline`
    (expiring what is waited on) runs first, if given, and `look` has the last word.
    """
    async with listening(group) as wake_ups:
        while (found := await look()) is None:
            remaining = (deadline - timezone.now()).total_seconds()
            if remaining <= 0:
                if on_deadline is None:
                    return None
                await on_deadline()
                return await look()
            await wake_ups.next(timeout=min(settings.CALL_REREAD_SECONDS, remaining))
        return found


async def keep_listening(layer):
    """Keep one channel of this event loop open for the loop's life.

    While a process is subscribed to nothing, channels_redis's pub/sub layer looks for
    subscriptions only every 100 ms, so the first wake-up after a quiet spell would wait
    up to that long. With one channel always open it reads each message as it comes.
    The other layers only name a channel here.
    """
    loop = asyncio.get_running_loop()
    if _KEPT.get(loop) is not layer:
        _KEPT[loop] = layer
        await layer.new_channel()


def call_changed(call, event: str):
    """Wake the request waiting on this call, wherever it lives, and tell the operators."""
    send_after_commit(
        (call_group(call.pk), {"type": "call.update", "status": call.status}),
        (OPERATORS, {"type": "call.event", "event": event, "call_id": call.pk, "status": call.status}),
    )


def catalog_changed(server_id):
    send_after_commit(
        (CATALOG, {"type": "catalog.changed", "server_id": server_id}),
        (OPERATORS, {"type": "catalog.event", "event": "catalog.changed", "server_id": server_id}),
    )


def upstream_retired(server_name: str):
    """A server was disabled, changed or deleted: every process closes its sessions to it (stdio children stop)."""
    send_after_commit((UPSTREAM, {"type": "upstream.retired", "server": server_name}))


def server_status(server):
    """A server's health changed: operators' pages show it beside its calls and in the server list."""
    send_after_commit(
        (OPERATORS, {"type": "server.event", "event": "server.status", "server_id": server.pk, "health": server.health})
    )


def access_changed(user_ids):
    """Tell these people's open sockets to check again whether they may watch calls."""
    if user_ids:
        send_after_commit(*((user_group(pk), {"type": "access.changed"}) for pk in sorted(set(user_ids))))


def session_ended(session_key: str):
    """Close the sockets this session opened: its user signed out."""
    send_after_commit((session_group(session_key), {"type": "access.ended"}))


def input_changed(request, event: str):
    """Wake the handler waiting for this input request and the request relaying its call, and tell the operators."""
    send_after_commit(
        (input_group(request.pk), {"type": "input.update", "status": request.status}),
        (call_group(request.call_id), {"type": "call.update", "status": "", "input_id": request.pk}),
        (OPERATORS, {"type": "input.event", "event": event, "input_id": request.pk, "call_id": request.call_id}),
    )
