"""The few statements on every call's path, run on the database driver's cursor rather than Django's.

A statement through Django's cursor passes its layers (the check for an event loop, the execute wrappers, the
translation of errors, on SQLite the rewriting of each %s into ?), and `django.db.connection` is looked up
anew, through asgiref's Local, at each use: on a call's short statements together about as much as the
database's running them. Within the loop's batch of writes (`held`, inside its transaction) the connection is
taken once with a cursor of its driver, and each statement is put in the driver's parameter style once.

A statement that anything watches through Django's cursor goes through it as before: with queries logged
(DEBUG, a test capturing them) or an execute wrapper installed. The driver's errors come out as Django's, as
they do through its cursor, and a transaction that must roll back refuses further statements alike.

On PostgreSQL psycopg opens a transaction with a BEGIN of its own, a round trip to the server before the
first statement, and Django's commit is another after the last. Here the BEGIN goes in one message with the
first statement, and the COMMIT with the last where its caller says it is the last (`execute(..., last=True)`)
of a held block that is the whole transaction: a write transaction is then two round trips fewer. Only
through Django's ClientCursor (its default), whose statements go with their values as one query text, which
may hold several statements; psycopg's pipeline mode would not do it, as it waits for its BEGIN alone and
every pipeline ends with a round trip of its own.

The values those statements carry are adapted by the backend as their fields would be; `moment` writes the
commonest, a UTC time on SQLite, as the backend does without its lookups.
"""

import functools
import sqlite3
import threading
from contextlib import contextmanager
from datetime import UTC, datetime

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.backends.sqlite3.base import SQLiteCursorWrapper
from psycopg import ClientCursor
from psycopg.pq import TransactionStatus


class _Held(threading.local):
    database = None
    cursor = None
    execute = None
    # Whether the held block is the whole transaction: its atomic block the outermost, which commits on leaving.
    whole = False


_held = _Held()


@contextmanager
def held():
    """Within an atomic block: this thread's connection, and a cursor of its driver, for the statements of
    this module until it ends.

    Only there: a transaction keeps its connection to its end (Django opens none in its place), so the cursor
    is of the connection every statement of the block runs on. One whose connection closed is left to Django's
    cursor, which refuses its statements.
    """
    database = connections[DEFAULT_DB_ALIAS]
    if (
        _held.database is not None
        or not database.in_atomic_block
        or database.closed_in_transaction
        or database.connection is None
    ):
        yield
        return
    database.validate_thread_sharing()
    cursor = database.create_cursor()
    _held.database, _held.cursor = database, cursor
    _held.execute = _executor(database, cursor)
    _held.whole = database.commit_on_exit and len(database.atomic_blocks) == 1
    try:
        yield
    finally:
        _held.database = _held.cursor = _held.execute = None
        _held.whole = False
        cursor.close()


def database():
    """This thread's connection: the one held, without looking it up again, or Django's."""
    found = _held.database
    return found if found is not None else connections[DEFAULT_DB_ALIAS]


def fetch_one(sql: str, params) -> tuple | None:
    """The first row `sql` gives, with `params` in Django's style (%s)."""
    cursor = _run(sql, params)
    if cursor is not None:
        return cursor.fetchone()
    with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchone()


def execute(sql: str, params, last: bool = False) -> int:
    """Run `sql` with `params` in Django's style (%s): how many rows it changed.

    `last`: nothing of the transaction follows; where the held block is the whole transaction, it may commit with
    the statement, and Django's commit then finds nothing left to do.
    """
    cursor = _run(sql, params, last)
    if cursor is not None:
        return cursor.rowcount
    with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount


def moment(operations, value: datetime):
    """An aware time as the backend adapts it (adapt_datetimefield_value). On SQLite in UTC a UTC time's text is
    written here as the backend writes it, without its lookups of the settings on every time."""
    database = operations.connection
    if value.tzinfo is UTC and database.vendor == "sqlite" and database.timezone is UTC:
        # Made naive in the zone it is already in: the time less its zone.
        return str(value.replace(tzinfo=None))
    return operations.adapt_datetimefield_value(value)


def _run(sql: str, params, last: bool = False):
    """The held cursor with `sql` run on it, or None where the statement goes through Django's cursor."""
    found = _held.database
    if found is None or found.execute_wrappers or found.queries_logged:
        return None
    found.validate_no_broken_transaction()
    cursor = _held.cursor
    # No savepoint may be open: a commit would end it before its release.
    commits = last and _held.whole and not any(found.savepoint_ids)
    try:
        _held.execute(cursor, sql, params, commits)
    except Exception:
        with found.wrap_database_errors:
            raise
    return cursor


def _executor(database, cursor):
    if database.vendor == "sqlite":
        return _sqlite_execute
    if isinstance(cursor, ClientCursor):
        return _postgresql_execute
    return _execute


def _execute(cursor, sql: str, params, commits: bool):
    cursor.execute(sql, params)


def _sqlite_execute(cursor, sql: str, params, commits: bool):
    # The driver's own execute: SQLiteCursorWrapper's would convert the statement again each time.
    sqlite3.Cursor.execute(cursor, _qmark(sql), params)


def _postgresql_execute(cursor, sql: str, params, commits: bool):
    """`sql` in one message with the BEGIN psycopg would send before it alone, and with the COMMIT if it `commits`."""
    connection = cursor.connection
    begins = (
        not connection.autocommit
        and connection.pgconn.transaction_status == TransactionStatus.IDLE
        # A transaction of other characteristics is begun by psycopg, which words its BEGIN.
        and connection.isolation_level is None
        and connection.read_only is None
        and connection.deferrable is None
    )
    if begins:
        # In autocommit mode psycopg begins nothing: the BEGIN sent here holds until the COMMIT, which psycopg's
        # commit sends alike (Django turns autocommit back on as the transaction ends, as it would have).
        connection.autocommit = True
        sql = f"BEGIN; {sql}"
    if commits:
        sql = f"{sql}; COMMIT"
    cursor.execute(sql, params)
    if begins:
        # The statement's own result, after the BEGIN's.
        cursor.nextset()


@functools.lru_cache(maxsize=512)
def _qmark(sql: str) -> str:
    """`sql` with Django's placeholders as SQLite's, as SQLiteCursorWrapper converts them."""
    return SQLiteCursorWrapper.convert_query(None, sql)
