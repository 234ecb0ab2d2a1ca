"""The ORM for the operators' websocket consumers, on a connection kept open between events.

Channels' database_sync_to_async closes the thread's connection before and after
every call unless CONN_MAX_AGE keeps it, and the console needs CONN_MAX_AGE 0:
under daphne each request has a thread of its own, so kept connections would pile
up. Consumers all share asgiref's one thread for synchronous code, so there a
working connection stays open between events and only one that failed is closed.
Opening a SQLite connection costs more than the queries of a pushed row.
"""

from asgiref.sync import SyncToAsync
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
