"""This event loop's sessions to upstream servers, and the closing of those to servers retired since they opened.

A server disabled, changed or deleted anywhere is announced to every process (live.events.upstream_retired);
the announcement reaches those listening when it is sent, at most once, so a sweep on the housekeeping
schedule closes whatever sessions it missed.
"""

import asyncio
import logging
import weakref

from django.conf import settings

from approvals.catalog.models import Server
from approvals.catalog.specs import upstream_spec
from approvals.catalog.watch import on_upstream_notification
from approvals.db.shared_threads import in_shared_thread
from approvals.inputs import runner as input_runner
from approvals.live import events
from approvals.upstream import SessionPool
from approvals.upstream.pool import running_loop_pool
from approvals.upstream.spec import ServerSpec

log = logging.getLogger(__name__)
# How often the listener for retired servers joins its group again (the Redis layers forget members after a day).
REJOIN_SECONDS = 3600
# Per pool, the task closing its sessions to retired servers: kept referenced, as the loop holds tasks weakly.
_CLOSERS: "weakref.WeakKeyDictionary[SessionPool, asyncio.Task]" = weakref.WeakKeyDictionary()


def session_pool() -> SessionPool:
    """This event loop's upstream sessions, with the console's handlers for what servers send outside a call."""
    return running_loop_pool(pool_closing_retired_servers)


class RememberingPool(SessionPool):
    """A SessionPool that remembers the spec each server's session was last asked for, for the sweep."""

    def __init__(self, **handlers):
        super().__init__(**handlers)
        self.specs: dict[str, ServerSpec] = {}

    async def get(self, spec: ServerSpec):
        self.specs[spec.name] = spec
        return await super().get(spec)


def pool_closing_retired_servers() -> SessionPool:
    pool = RememberingPool(on_notification=on_upstream_notification, on_request=input_runner.unclaimed_request)
    _CLOSERS[pool] = asyncio.ensure_future(close_retired_servers(pool))
    return pool


async def close_retired_servers(pool: RememberingPool):
    """Close the pool's session to each server retired anywhere (disabled, changed or deleted), for the loop's life.

    A changed server would be reopened on its next use anyway, since the pool compares its spec; a disabled or
    deleted one has no next use, and its stdio child would run on. Resource subscriptions a client gave up
    anywhere are dropped here too: the pool that holds them may be this one. The broadcast of a retirement reaches the
    processes listening when it is sent, at most once: on the housekeeping schedule a sweep closes whatever
    sessions it missed.
    """
    loop = asyncio.get_running_loop()
    async with events.listening(events.UPSTREAM) as retired:
        rejoin_at = loop.time() + REJOIN_SECONDS
        while True:
            message = await retired.next(timeout=settings.STALE_CALLS_INTERVAL_SECONDS)
            try:
                if message is None:
                    await close_sessions_of_retired_servers(pool)
                elif message.get("type") == "upstream.released" and isinstance(message.get("holder"), str):
                    uri = message.get("uri")
                    await pool.release(message["holder"], uri=uri if isinstance(uri, str) else None)
                elif isinstance(message.get("server"), str):
                    pool.specs.pop(message["server"], None)
                    await pool.close(message["server"])
            except Exception:
                # One session failing to close must not end the listening for the next ones.
                log.exception("acting on %s failed", message)
            if loop.time() >= rejoin_at:
                await retired.rejoin()
                rejoin_at = loop.time() + REJOIN_SECONDS


async def close_sessions_of_retired_servers(pool: RememberingPool):
    """Close the pool's sessions to servers no longer enabled, or no longer as the session was opened for."""
    if not pool.specs:
        return
    opened = dict(pool.specs)
    current = await in_shared_thread(current_specs)(list(opened))
    for name, spec in opened.items():
        # A session asked for afresh meanwhile is the pool's to keep, even for a spec equal to the one read: each
        # ask records a spec of its own, so only the very one read means nobody asked since.
        if current.get(name) != spec and pool.specs.get(name) is spec:
            del pool.specs[name]
            await pool.close(name)


def current_specs(names: list[str]) -> dict[str, ServerSpec]:
    return {server.name: upstream_spec(server) for server in Server.objects.filter(name__in=names, enabled=True)}
