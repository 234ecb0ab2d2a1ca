"""This event loop's sessions to upstream servers, and the closing of those to servers retired since they opened.

A server disabled, changed or deleted anywhere is announced to every process (live.events.upstream_retired);
the announcement reaches those listening when it is sent, at most once, so a sweep on the housekeeping
schedule closes whatever sessions it missed.
"""

import asyncio
import logging
import weakref
from dataclasses import replace

from django.conf import settings

from approvals.catalog.models import Server
from approvals.catalog.specs import upstream_spec
from approvals.catalog.upstream_notifications import on_upstream_notification
from approvals.db.shared_threads import in_shared_thread
from approvals.inputs import runner as input_runner
from approvals.live import events, waiting
from approvals.tokens.models import ClientToken
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


async def spec_for(server: Server, token_id: int | None) -> ServerSpec:
    """The server as a client token's request reaches it: on a per-person server, through the connection of the
    person the token acts as (ClientToken.person), so the upstream attributes the action to that person; else
    through the shared one."""
    if server.oauth and server.connection == Server.Connection.PER_PERSON:
        return upstream_spec(server, await in_shared_thread(person_of)(token_id))
    return upstream_spec(server)


def person_of(token_id: int | None):
    token = ClientToken.objects.select_related("owner").filter(pk=token_id).first()
    return token.person if token is not None else None


class RememberingPool(SessionPool):
    """A SessionPool that remembers the spec each session (a server's, for an identity) was last asked for."""

    def __init__(self, **handlers):
        super().__init__(**handlers)
        self.specs: dict[tuple[str, str], ServerSpec] = {}

    async def get(self, spec: ServerSpec):
        self.specs[spec.name, spec.identity] = spec
        return await super().get(spec)

    def forget(self, name: str, identity: str | None = None):
        for key in [key for key in self.specs if key[0] == name and identity in (None, key[1])]:
            del self.specs[key]


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
    async with waiting.listening(events.UPSTREAM) as retired:
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
                    identity = message.get("identity") if isinstance(message.get("identity"), str) else None
                    pool.forget(message["server"], identity)
                    await pool.close(message["server"], identity)
            except Exception:
                # One session failing to close must not end the listening for the next ones.
                log.exception("acting on %s failed", message)
            if loop.time() >= rejoin_at:
                await retired.rejoin()
                rejoin_at = loop.time() + REJOIN_SECONDS


async def close_sessions_of_retired_servers(pool: RememberingPool):
    """Close the pool's sessions to servers no longer enabled, or no longer as the sessions were opened for."""
    if not pool.specs:
        return
    opened = dict(pool.specs)
    current = await in_shared_thread(current_specs)(list({name for name, _ in opened}))
    for (name, identity), spec in opened.items():
        # A session asked for afresh meanwhile is the pool's to keep, even for a spec equal to the one read: each
        # ask records a spec of its own, so only the very one read means nobody asked since. Whose connection a
        # session is is no part of the server's configuration.
        changed = current.get(name) != replace(spec, identity="")
        if changed and pool.specs.get((name, identity)) is spec:
            pool.forget(name)
            await pool.close(name)


def current_specs(names: list[str]) -> dict[str, ServerSpec]:
    return {server.name: upstream_spec(server) for server in Server.objects.filter(name__in=names, enabled=True)}
