"""The ORM for the operators' websocket consumers, on a connection kept open between events.

Channels closes the thread's connection before every event a consumer handles, and
its database_sync_to_async before and after every call, unless CONN_MAX_AGE keeps
it, and the console needs CONN_MAX_AGE 0: in a web process each request has a thread of
its own, so kept connections would pile up. Consumers all share asgiref's one thread
for synchronous code, so there a working connection stays open between events and
only one that failed is closed. Opening a connection (a new one on SQLite, one from
the pool on PostgreSQL) costs about as much as the queries of a pushed row.
"""

from asgiref.sync import SyncToAsync
from channels.consumer import get_handler_name
from django.db import connections


class KeptConnectionSyncToAsync(SyncToAsync):
    def thread_handler(self, loop, *args, **kwargs):
        try:
            return super().thread_handler(loop, *args, **kwargs)
        finally:
            close_failed_connections()


def close_failed_connections():
    for connection in connections.all(initialized_only=True):
        if connection.errors_occurred:
            if connection.is_usable():
                connection.errors_occurred = False
            else:
                connection.close()


# Used like channels' database_sync_to_async, as a wrapper around a synchronous callable.
db_sync_to_async = KeptConnectionSyncToAsync


class KeepsItsConnection:
    """Mixed into a consumer: its events are handled without channels' closing of the connection first."""

    async def dispatch(self, message):
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)
