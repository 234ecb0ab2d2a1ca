"""What every request looks up and seldom changes, kept in the process until it changes: a client's token, its
session, the tool it calls, the enabled rules and webhook endpoints.

Every change of the tables they come from (an insert, update or delete, by any process, through the ORM
or not) writes a new random stamp into one row, by a database trigger (migration 0009_kept_lookups). A
request reads that row once, with `refresh`, before it looks anything up; what was kept under another
stamp is not used. A stamp is random rather than a counter: a rolled-back change restores the row, and a
counter could come round again to a value that stood for other rows.

Only code that has just refreshed uses what is kept (`load(..., kept=True)`, `peek`): the gateway, once
per request, and the loop's batch of writes, once per batch. Anything else reads the database.

The gateway reads the stamp on its event loop (`refresh_on_the_loop`), by a connection of the loop's own
rather than Django's, so that a kept token needs no hop to a thread: a SQLite file's at once (in WAL mode a
reader waits for no writer, and one row costs less than a hop), PostgreSQL's asynchronously (LoopStampReads).
"""

import asyncio
import contextvars
import functools
import sqlite3
import threading
from collections.abc import Callable

import psycopg
from django.db import connections

from approvals import driver
from approvals.db.models import LookupStamp

# More entries than this and all are dropped: a flood of sessions must not grow the process without bound.
MOST = 20_000
_NEVER = object()
# The stamp is the reading request's own (each task and thread has its context): a batch's thread that read
# an older stamp, and kept it a moment after a request read a newer one, must not lend that request its age.
_stamp: contextvars.ContextVar = contextvars.ContextVar("kept_stamp", default=_NEVER)
_kept: dict = {}


# A reader has only the one row to read: a lock on the file lasts no longer than a writer's commit.
LOOP_READ_TIMEOUT_SECONDS = 0.5
_loop_reader = threading.local()


@functools.cache
def stamp_sql() -> str:
    # Made once: looking the connection up on an event loop makes a connection object for each request. SQLite and
    # PostgreSQL quote a table's name alike.
    return f"SELECT stamp FROM {driver.database().ops.quote_name(LookupStamp._meta.db_table)} WHERE id = 1"


def refresh():
    """Read the stamp: from now on, only what was kept under it is used."""
    keep_stamp(driver.fetch_one(stamp_sql(), ()))


def keep_stamp(row):
    # No row yet (or emptied by a test's flush) is a stamp like any other.
    _stamp.set(row[0] if row else None)


async def refresh_on_the_loop() -> bool:
    """Read the stamp from an event loop, without Django's connection; whether it could.

    A SQLite file and PostgreSQL allow it; an in-memory database does not, and the caller refreshes in a thread.
    """
    # The database's settings as its connection holds them (the very dict, which a test database renames), read
    # without connections["default"], which on an event loop makes a connection object anew for each request.
    database = connections.settings["default"]
    if database["ENGINE"] == "django.db.backends.postgresql":
        try:
            keep_stamp(await loop_stamp_reads().read())
        except (psycopg.Error, OSError):
            return False
        return True
    return database["ENGINE"] == "django.db.backends.sqlite3" and refresh_from_the_file(str(database["NAME"]))


def refresh_from_the_file(name: str) -> bool:
    """The stamp read in this thread from a SQLite file, by a connection of the thread's own that lives with it."""
    if name == ":memory:" or "mode=memory" in name:
        return False
    reader = getattr(_loop_reader, "connection", None)
    try:
        if reader is None or _loop_reader.name != name:
            reader = sqlite3.connect(name, timeout=LOOP_READ_TIMEOUT_SECONDS, isolation_level=None)
            _loop_reader.connection, _loop_reader.name = reader, name
        keep_stamp(reader.execute(stamp_sql()).fetchone())
    except sqlite3.Error:
        _loop_reader.connection = None
        return False
    return True


class LoopStampReads:
    """PostgreSQL's stamp read for one event loop, by a connection of its own, one read at a time.

    Whoever asks while a read is under way gets the next read's row: a read sent after they asked, which sees
    every change committed before they asked, as a read of their own would; all who asked meanwhile share its
    round trip. The connection is closed as the loop's tasks are cancelled at its end (asyncio.run).
    """

    def __init__(self):
        self.asked: asyncio.Future | None = None
        self.wanted = asyncio.Event()
        self.serving: asyncio.Task | None = None
        self.connection: psycopg.AsyncConnection | None = None

    async def read(self):
        loop = asyncio.get_running_loop()
        if self.asked is None:
            self.asked = loop.create_future()
            self.wanted.set()
        if self.serving is None:
            self.serving = loop.create_task(self.serve(loop), context=contextvars.Context())
        # Shielded: a request cancelled meanwhile leaves the read to the others who asked for it.
        return await asyncio.shield(self.asked)

    async def serve(self, loop: asyncio.AbstractEventLoop):
        asked = None
        try:
            while True:
                await self.wanted.wait()
                self.wanted.clear()
                asked, self.asked = self.asked, None
                try:
                    asked.set_result(await self.read_now())
                except Exception as exc:
                    # A connection that failed once is not trusted again: the next read opens another.
                    await self.close()
                    asked.set_exception(exc)
        finally:
            if asked is not None and not asked.done():
                asked.cancel()
            _loop_reads.pop(loop, None)
            await self.close()

    async def read_now(self):
        if self.connection is None:
            params = connections["default"].get_connection_params()
            # Django's cursor class is for its own, synchronous, connections.
            params.pop("cursor_factory", None)
            self.connection = await psycopg.AsyncConnection.connect(**params, autocommit=True)
        cursor = await self.connection.execute(stamp_sql())
        return await cursor.fetchone()

    async def close(self):
        found, self.connection = self.connection, None
        if found is not None:
            await found.close()


# Each loop's entry goes with its reads' task, at the loop's end.
_loop_reads: dict[asyncio.AbstractEventLoop, LoopStampReads] = {}


def loop_stamp_reads() -> LoopStampReads:
    loop = asyncio.get_running_loop()
    if loop not in _loop_reads:
        _loop_reads[loop] = LoopStampReads()
    return _loop_reads[loop]


def peek(kind: str, key):
    """What is kept of `key` under the stamp last read, or None."""
    entry, stamp = _kept.get((kind, key)), _stamp.get()
    if entry is not None and entry[0] == stamp and stamp is not _NEVER:
        return entry[1]
    return None


def load(kind: str, key, loader: Callable, kept: bool = False):
    """`loader()`'s value, kept under the stamp read before it ran; with `kept`, what is kept already if any.

    None is never kept: unknown names and secrets cost a query each, and fill nothing.
    """
    if not kept:
        return loader()
    stamp = _stamp.get()
    found = peek(kind, key)
    if found is not None:
        return found
    value = loader()
    if value is not None and stamp is not _NEVER:
        if len(_kept) >= MOST:
            _kept.clear()
        _kept[kind, key] = (stamp, value)
    return value
