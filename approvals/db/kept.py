"""What every request looks up and seldom changes, kept in the process until it changes: a client's token, its
session, the tool it calls, the enabled rules and webhook endpoints.

Every change of the tables they come from (an insert, update or delete, by any process, through the ORM
or not) writes a new random stamp into one row, by a database trigger (migration 0009_kept_lookups). A
request reads that row once, with `refresh`, before it looks anything up; what was kept under another
stamp is not used. A stamp is random rather than a counter: a rolled-back change restores the row, and a
counter could come round again to a value that stood for other rows.

Only code that has just refreshed uses what is kept (`load(..., kept=True)`, `peek`): the gateway, once
per request, and the loop's batch of writes, once per batch. Anything else reads the database.

On a SQLite file the gateway reads the stamp on its event loop (`refresh_on_the_loop`), by a connection of
the loop's own: in WAL mode a reader waits for no writer, and one row costs less than a hop to a thread.
"""

import sqlite3
import threading
from collections.abc import Callable

from django.db import connection, connections

from approvals.db.models import LookupStamp

# More entries than this and all are dropped: a flood of sessions must not grow the process without bound.
MOST = 20_000
_NEVER = object()
_stamp = _NEVER
_kept: dict = {}


# A reader has only the one row to read: a lock on the file lasts no longer than a writer's commit.
LOOP_READ_TIMEOUT_SECONDS = 0.5
_loop_reader = threading.local()


def stamp_sql() -> str:
    return f"SELECT stamp FROM {connection.ops.quote_name(LookupStamp._meta.db_table)} WHERE id = 1"


def refresh():
    """Read the stamp: from now on, only what was kept under it is used."""
    with connection.cursor() as cursor:
        cursor.execute(stamp_sql())
        keep_stamp(cursor.fetchone())


def keep_stamp(row):
    global _stamp
    # No row yet (or emptied by a test's flush) is a stamp like any other.
    _stamp = row[0] if row else None


def refresh_on_the_loop() -> bool:
    """Read the stamp in this thread, an event loop's, without Django's connection; whether it could.

    Only a SQLite file allows it: elsewhere (PostgreSQL, an in-memory database) the caller refreshes in a
    thread. The connection is this thread's own and lives with it.
    """
    database = connections["default"]
    name = str(database.settings_dict["NAME"])
    if database.vendor != "sqlite" or name == ":memory:" or "mode=memory" in name:
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


def peek(kind: str, key):
    """What is kept of `key` under the stamp last read, or None."""
    entry = _kept.get((kind, key))
    if entry is not None and entry[0] == _stamp and _stamp is not _NEVER:
        return entry[1]
    return None


def load(kind: str, key, loader: Callable, kept: bool = False):
    """`loader()`'s value, kept under the stamp read before it ran; with `kept`, what is kept already if any.

    None is never kept: unknown names and secrets cost a query each, and fill nothing.
    """
    if not kept:
        return loader()
    stamp = _stamp
    found = peek(kind, key)
    if found is not None:
        return found
    value = loader()
    if value is not None and stamp is not _NEVER:
        if len(_kept) >= MOST:
            _kept.clear()
        _kept[kind, key] = (stamp, value)
    return value
