"""The events the queue page receives, kept in a bounded window that `GET /api/v1/events` reads and resumes from.

approvals.actions.announce notes each call's and input request's event here; it is appended once the
change commits. With REDIS_URL the window is a Redis stream, so that every web process appends
to and reads from the same one, and its ids order the events across processes; embedded
(one process, as its in-memory channel layer is) it is a deque in the process. An id is
`<milliseconds>-<sequence>`, as Redis makes them, and what a stream resumes after (`Last-Event-ID`).
"""

import asyncio
import json
import logging
import re
import threading
import time
import weakref
from collections import deque
from dataclasses import dataclass

import redis
import redis.asyncio
from django.conf import settings
from django.db import transaction

from approvals.live import events

# About an hour of a busy console; Redis trims in whole nodes, so it keeps at least this many.
WINDOW = 10_000
STREAM_KEY = "console:api-events"
EVENT_ID = re.compile(r"^(\d{1,20})-(\d{1,20})$")

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Entry:
    id: str
    event: str
    data: dict


def parse_id(value: str) -> tuple[int, int] | None:
    found = EVENT_ID.match(value)
    return (int(found.group(1)), int(found.group(2))) if found else None


def note(event: str, **data):
    """Append this event to the window once the transaction commits; a failure is logged, never raised."""
    transaction.on_commit(lambda: window().append(event, data), robust=True)


class MemoryWindow:
    """The window of one process: appended to from any thread, read by streams on any event loop."""

    def __init__(self, size: int = WINDOW):
        self.entries: deque[Entry] = deque(maxlen=size)
        self.lock = threading.Lock()
        self.last = (0, 0)
        # The newest id the window let go of; at first, whatever came before this process began.
        self.dropped = (int(time.time() * 1000), 0)
        self.waiters: set[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = set()

    def append(self, event: str, data: dict):
        with self.lock:
            now = int(time.time() * 1000)
            number = (now, 0) if now > self.last[0] else (self.last[0], self.last[1] + 1)
            if len(self.entries) == self.entries.maxlen:
                self.dropped = parse_id(self.entries[0].id)
            self.entries.append(Entry(f"{number[0]}-{number[1]}", event, data))
            self.last = number
            waiters = list(self.waiters)
        for loop, woken in waiters:
            if not loop.is_closed():
                loop.call_soon_threadsafe(woken.set)

    async def latest(self) -> str:
        return f"{self.last[0]}-{self.last[1]}"

    async def lost_after(self, after: str) -> bool:
        return parse_id(after) < self.dropped

    async def read(self, after: str, timeout: float) -> list[Entry]:
        """The entries after `after`, waiting up to `timeout` seconds for the first one."""
        woken = asyncio.Event()
        waiter = (asyncio.get_running_loop(), woken)
        self.waiters.add(waiter)
        try:
            if found := self.entries_after(after):
                return found
            try:
                async with asyncio.timeout(timeout):
                    await woken.wait()
            except TimeoutError:
                return []
            return self.entries_after(after)
        finally:
            self.waiters.discard(waiter)

    def entries_after(self, after: str) -> list[Entry]:
        # From the newest back: a stream that keeps up reads a few entries, not the whole window.
        start, found = parse_id(after), []
        with self.lock:
            for entry in reversed(self.entries):
                if parse_id(entry.id) <= start:
                    break
                found.append(entry)
        return found[::-1]


class RedisWindow:
    """The window as a Redis stream, capped at about WINDOW entries."""

    def __init__(self, url: str):
        self.url = url
        self.client = redis.Redis.from_url(url)
        self.readers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, redis.asyncio.Redis] = (
            weakref.WeakKeyDictionary()
        )
        self.writers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, LoopWriter] = weakref.WeakKeyDictionary()

    def append(self, event: str, data: dict):
        """Under a web process its event loop writes it, so the committing thread (a client's call, an operator's
        decision) never waits for Redis; elsewhere (a celery worker, a command) the thread writes and waits."""
        fields = {"event": event, "data": json.dumps(data, separators=(",", ":"))}
        loop = events.SERVING_LOOP.get()
        if loop is None or loop.is_closed():
            self.client.xadd(STREAM_KEY, fields, maxlen=WINDOW, approximate=True)
        else:
            events.to_the_loop(loop, self.writer(loop).add, fields)

    def writer(self, loop: asyncio.AbstractEventLoop) -> "LoopWriter":
        if loop not in self.writers:
            self.writers[loop] = LoopWriter(self.url)
        return self.writers[loop]

    def reader(self) -> redis.asyncio.Redis:
        # One client per event loop: an asyncio connection belongs to the loop that opened it.
        loop = asyncio.get_running_loop()
        if loop not in self.readers:
            self.readers[loop] = redis.asyncio.Redis.from_url(self.url)
        return self.readers[loop]

    async def latest(self) -> str:
        newest = await self.reader().xrevrange(STREAM_KEY, count=1)
        return newest[0][0].decode() if newest else "0-0"

    async def lost_after(self, after: str) -> bool:
        """Whether entries after `after` were trimmed: it is older than the oldest kept (or, with none kept,
        than the newest made). It may say so of an id that has just left the window itself, never miss a loss."""
        try:
            info = await self.reader().xinfo_stream(STREAM_KEY)
        except redis.ResponseError:  # no stream yet: nothing was ever trimmed
            return False
        oldest = info["first-entry"][0] if info.get("first-entry") else info["last-generated-id"]
        kept_from = parse_id(oldest.decode() if isinstance(oldest, bytes) else oldest)
        return parse_id(after) < kept_from and info["length"] < info["entries-added"]

    async def read(self, after: str, timeout: float) -> list[Entry]:
        found = await self.reader().xread({STREAM_KEY: after}, count=100, block=max(1, int(timeout * 1000)))
        return [
            Entry(entry_id.decode(), fields[b"event"].decode(), json.loads(fields[b"data"]))
            for _, entries in found or []
            for entry_id, fields in entries
        ]


class LoopWriter:
    """One event loop's appends, written in the order they came, those that queued meanwhile in one round trip."""

    def __init__(self, url: str):
        self.client = redis.asyncio.Redis.from_url(url)
        self.queued: list[dict] = []
        self.writing: asyncio.Future | None = None

    def add(self, fields: dict):
        self.queued.append(fields)
        if self.writing is None or self.writing.done():
            self.writing = asyncio.ensure_future(self.write())
            self.writing.add_done_callback(events.log_failed_send)

    async def write(self):
        while self.queued:
            batch, self.queued = self.queued, []
            async with self.client.pipeline(transaction=False) as pipe:
                for fields in batch:
                    pipe.xadd(STREAM_KEY, fields, maxlen=WINDOW, approximate=True)
                await pipe.execute()


_window: MemoryWindow | RedisWindow | None = None
_window_lock = threading.Lock()


def window() -> MemoryWindow | RedisWindow:
    global _window
    with _window_lock:
        if _window is None:
            _window = RedisWindow(settings.REDIS_URL) if settings.REDIS_URL else MemoryWindow()
        return _window
