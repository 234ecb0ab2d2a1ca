"""Calls held as requests hold them: for the tests of held calls' cost and cancellation."""

from asgiref.sync import ThreadSensitiveContext, sync_to_async
from django.db import close_old_connections, connection

# The loop's default executor, which runs sync_to_async(thread_sensitive=False), names its threads so.
SHARED_THREADS = "asyncio_"


async def as_a_request(work):
    """Run `work` as Django runs a request: its synchronous parts in a thread of the request's own, whose
    connection is let go of when the request ends (Django's request_finished)."""
    async with ThreadSensitiveContext():
        try:
            return await work
        finally:
            await sync_to_async(close_old_connections)()


def none_but_the_shared_threads(kept: list[str]) -> bool:
    """No connection kept but one in each of the loop's shared threads on SQLite, which has no pool to give it to;
    none at all on a pooled database."""
    if connection.vendor != "sqlite":
        return not kept
    return all(name.startswith(SHARED_THREADS) for name in kept) and len(kept) == len(set(kept))
