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
from django.dispatch import Signal
from django.utils import timezone

OPERATORS = "operators"
CATALOG = "catalog"
# Every event loop holding upstream sessions (calls.runner): close those to a server that was retired.
UPSTREAM = "upstream"
# Per event loop, the layer that has a channel kept open on it (see keep_listening).
_KEPT: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, object]" = weakref.WeakKeyDictionary()
# Per event loop, the one channel every wait of the loop listens on (see Wakeups).
_WAKEUPS: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Wakeups]" = weakref.WeakKeyDictionary()
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


class Wakeups:
    """Every wait of one event loop on one channel: a wait costs an asyncio.Event, not a channel and a receive.

    The messages to the groups waited on name their group (see to_waiters); the one
    receive sets the events of that group. Whatever else learns that a group's row
    changed (a batched re-read) sets them too, with wake. Once nothing waits, the
    receive stops and the channel goes; the next wait opens another.
    """

    def __init__(self, layer):
        self.layer, self.loop = layer, asyncio.get_running_loop()
        self.waiting: dict[str, set[asyncio.Event]] = {}
        self.leaving: set[asyncio.Task] = set()
        self.channel = asyncio.ensure_future(layer.new_channel())
        self.receiving = asyncio.ensure_future(self.receive())

    async def receive(self):
        channel = await self.channel
        while True:
            try:
                message = await self.layer.receive(channel)
            except Exception:
                # A broken connection to the layer: the waits still re-read their rows, and the layer may come back.
                log.exception("wake-ups could not be received from the channel layer")
                await asyncio.sleep(1)
                continue
            self.wake(message.get("group"))

    def wake(self, group):
        for event in self.waiting.get(group, ()):
            event.set()

    @contextlib.asynccontextmanager
    async def joined(self, group: str) -> AsyncIterator[asyncio.Event]:
        """An event set on every wake-up of `group` for the block; the group is joined before the block starts."""
        event = asyncio.Event()
        members = self.waiting.setdefault(group, set())
        members.add(event)
        # In a task of its own, awaited shielded: a cancellation that lands inside the Redis layer's subscribe can
        # be lost there, and the request that was cut would wait on.
        joining = asyncio.ensure_future(self.join(group))
        try:
            await asyncio.shield(joining)
            yield event
        finally:
            members.discard(event)
            if not members and self.waiting.get(group) is members:
                del self.waiting[group]
                self.leave(group, joining)
            if not self.waiting:
                self.retire()

    async def join(self, group: str):
        await self.layer.group_add(group, await self.channel)

    def leave(self, group: str, joining: asyncio.Future):
        """Leave `group`, once joined, in a task of its own: a wait cut short ends at once (its call cancelled
        without waiting on the layer), and a burst of them does not queue behind the layer's one connection."""

        async def leaving():
            # Nothing waits on it: a group left joined only wakes a re-read that finds nothing.
            with contextlib.suppress(Exception):
                await asyncio.wait({joining})
                channel = await self.channel
                # Another wait may have joined it again meanwhile.
                if group not in self.waiting:
                    await self.layer.group_discard(group, channel)

        task = asyncio.ensure_future(leaving())
        self.leaving.add(task)
        task.add_done_callback(self.leaving.discard)

    def retire(self):
        if _WAKEUPS.get(self.loop) is self:
            del _WAKEUPS[self.loop]
        # Cancelling the receive is what lets the Redis pub/sub layer unsubscribe the channel.
        self.receiving.cancel()


def loop_wakeups() -> Wakeups:
    """This event loop's Wakeups, on the current channel layer."""
    loop, layer = asyncio.get_running_loop(), get_channel_layer()
    found = _WAKEUPS.get(loop)
    if found is None or found.layer is not layer:
        found = _WAKEUPS[loop] = Wakeups(layer)
    return found


def wake_here(group: str):
    """Wake the waits on `group` in this event loop, as a message to the group would."""
    found = _WAKEUPS.get(asyncio.get_running_loop())
    if found is not None:
        found.wake(group)


async def wait_until(
    group: str,
    look: Callable[[], Awaitable[T | None]],
    deadline: datetime,
    on_deadline: Callable[[], Awaitable] | None = None,
    *,
    reread: bool = True,
    quiet: Callable[[], Awaitable] | None = None,
) -> T | None:
    """What `look` finds, or None when `deadline` passes first.

    `look` re-reads what is waited on and returns it once the wait is over, None
    before. It runs at once and after every wake-up of `group` (a message, or
    wake_here); with `reread`, also at least every CALL_REREAD_SECONDS, since a
    message may be lost. Without it, something else re-reads for the wait and wakes
    it (calls.holding, one query for all the calls a process holds), and `quiet`, if
    given, runs every CALL_REREAD_SECONDS instead. The group is joined before the first
    look, so no change after it goes unnoticed. At the deadline `on_deadline`
    (expiring what is waited on) runs first, if given, and `look` has the last word.
    """
    timed = reread or quiet is not None
    async with loop_wakeups().joined(group) as woken:
        looking = True
        while True:
            if looking:
                woken.clear()
                if (found := await look()) is not None:
                    return found
            remaining = (deadline - timezone.now()).total_seconds()
            if remaining <= 0:
                if on_deadline is None:
                    return None
                await on_deadline()
                return await look()
            try:
                async with asyncio.timeout(min(settings.CALL_REREAD_SECONDS, remaining) if timed else remaining):
                    await woken.wait()
                looking = True
            except TimeoutError:
                looking = reread
                if quiet is not None and not reread:
                    await quiet()


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


def to_waiters(group: str, kind: str, **fields) -> tuple[str, dict]:
    """A wake-up for the waits on `group`: it names the group, since one channel of a process listens for many."""
    return group, {"type": kind, "group": group, **fields}


# A call or an input request changed: sent with the `row` and the live `event` it is (call.pending, input.answered...),
# inside the transaction that changed it. approvals.actions.announce, connected as the app starts, tells everyone who
# follows it: the live groups below, the API's journal and webhooks.
row_changed = Signal()


def changed(row, event: str, decided: bool = False):
    """Announce that this call or input request changed, as `event` (`decided`: by this change, a rule's or a
    person's decision)."""
    row_changed.send(sender=type(row), row=row, event=event, decided=decided)


def send_call_event(call, event: str):
    """Wake the request waiting on this call, wherever it lives, and tell the operators."""
    send_after_commit(
        to_waiters(call_group(call.pk), "call.update", status=call.status),
        (OPERATORS, {"type": "call.event", "event": event, "call_id": call.pk, "status": call.status}),
    )


# What a call's page shows of an upstream's progress message; the rest is the upstream's to keep.
PROGRESS_TEXT = 300


def a_number(value):
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


async def call_progress(call_id, params: dict):
    """An upstream reported progress on a forwarded call: the operators' pages of that call show it.

    Sent at once and kept nowhere: it is news from outside, with no row behind it. The values
    are the upstream's, so only numbers and a bounded text go on. A send that fails is only
    logged: the call goes on without its page knowing.
    """
    message = params.get("message")
    event = {
        "type": "call.progress",
        "call_id": call_id,
        "progress": a_number(params.get("progress")),
        "total": a_number(params.get("total")),
        "message": message[:PROGRESS_TEXT] if isinstance(message, str) else "",
    }
    try:
        await get_channel_layer().group_send(OPERATORS, event)
    except Exception:
        log.exception("a call's progress could not be sent to the channel layer")


# The lists a client may be told changed; a change names those it touched.
LISTS = ("tools", "resources", "prompts")


def catalog_changed(server_id, lists=LISTS):
    """The server's tools, resources or prompts (`lists`) changed: clients' streams say so, operators' pages show it."""
    send_after_commit(
        (CATALOG, {"type": "catalog.changed", "server_id": server_id, "lists": list(lists)}),
        (OPERATORS, {"type": "catalog.event", "event": "catalog.changed", "server_id": server_id}),
    )


async def resource_updated(server_name: str, uri: str):
    """An upstream server said a resource changed: every process's streams subscribed to it pass that on.

    Sent at once: it is news from outside, with no transaction behind it.
    """
    message = {"type": "resource.updated", "server": server_name, "uri": uri}
    await get_channel_layer().group_send(CATALOG, message)


def subscriptions_released(holder: str, uri: str | None = None):
    """A client no longer wants a resource (or any, without `uri`): each process drops its upstream subscriptions."""
    send_after_commit((UPSTREAM, {"type": "upstream.released", "holder": holder, "uri": uri}))


def upstream_retired(server_name: str, identity: str | None = None):
    """A server was disabled, changed or deleted: every process closes its sessions to it (stdio children stop).
    With `identity`, one person's connection to it changed: only that person's sessions close."""
    message = {"type": "upstream.retired", "server": server_name}
    if identity is not None:
        message["identity"] = identity
    send_after_commit((UPSTREAM, message))


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


def send_input_event(request, event: str):
    """Wake the handler waiting for this input request and the request relaying its call, and tell the operators."""
    send_after_commit(
        to_waiters(input_group(request.pk), "input.update", status=request.status),
        to_waiters(call_group(request.call_id), "call.update", status="", input_id=request.pk),
        (OPERATORS, {"type": "input.event", "event": event, "input_id": request.pk, "call_id": request.call_id}),
    )
