"""Synchronous database work run from an event loop in its shared threads, each connection given back after."""

import functools
from collections.abc import Callable

from asgiref.sync import sync_to_async
from django.db import close_old_connections, connection


def connection_given_back(func: Callable) -> Callable:
    """`func`, then its thread's database connection given back to the pool (PostgreSQL).

    Django hands a request's connection back only when the request ends: a request that goes on to
    hold its call for minutes would keep it all that time, and a few dozen such requests take the
    pool's every connection, leaving the writes of their own calls (and every other request) waiting.
    SQLite has no pool to give it to: the thread keeps it for its next work, since opening one costs
    more than the few queries a call's step runs on it. Run in the loop's shared threads
    (thread_sensitive=False), which are few and live on, that is a few connections in all; a
    request's own thread closes its connection when the request ends.
    """

    @functools.wraps(func)
    def given_back(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        finally:
            if connection.vendor != "sqlite":
                close_old_connections()

    return given_back


def in_shared_thread(func: Callable) -> Callable:
    """`func` awaitable, run in the loop's shared threads and its connection given back (connection_given_back):
    per-call lookups wait for no request's thread, and keep no connection from the pool while their call waits."""
    return sync_to_async(connection_given_back(func), thread_sensitive=False)
