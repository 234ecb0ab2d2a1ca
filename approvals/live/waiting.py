"""Waiting on the live groups: a listener for every message of one group, and the waits on a row that wake
when its group is told it changed, re-reading it now and then since a message may be lost.
"""

import asyncio
import contextlib
import logging
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import datetime
from typing import TypeVar

from channels.layers import get_channel_layer
from django.conf import settings
from django.utils import timezone

# Per event loop, the layer that has a channel kept open on it (see keep_listening).
_KEPT: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, object]" = weakref.WeakKeyDictionary()
# Per event loop, the one channel every wait of the loop listens on (see Wakeups).
_WAKEUPS: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Wakeups]" = weakref.WeakKeyDictionary()

log = logging.getLogger(__name__)
T = TypeVar("T")


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
