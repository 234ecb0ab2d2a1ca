"""Long-lived sessions, one per server and identity, for one event loop (the gateway's, inside the web process).

A server whose callers each connect their own account gets a session per person (ServerSpec.identity): an
upstream binds a session to the credential that opened it, and one person's session must never carry another's
request.
"""

import asyncio
import functools
import logging
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from .errors import AuthorizationRequired, UpstreamError
from .session import UpstreamSession, connect
from .spec import ServerSpec

FIRST_BACKOFF_SECONDS = 0.5

log = logging.getLogger(__name__)


@dataclass(eq=False)
class _Entry:
    spec: ServerSpec
    session: UpstreamSession | None = None
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    failures: int = 0  # connects that failed, or sessions that died young, in a row
    retry_at: float = 0.0
    opened_at: float = 0.0
    # Each resource subscribed to on the server, and who holds the subscription (see subscribe).
    subscriptions: dict[str, set] = field(default_factory=dict)


def _key(spec: ServerSpec) -> tuple[str, str]:
    return spec.name, spec.identity


class SessionPool:
    """Sessions opened on first use and reopened, with exponential backoff, once they die.

    `on_request(spec, method, params)` and `on_notification(spec, method, params)`,
    when given, receive what each server sends outside any call; a call's own
    handlers are passed to call_tool.
    """

    def __init__(
        self,
        *,
        on_request: Callable[[ServerSpec, str, dict], Awaitable[dict]] | None = None,
        on_notification: Callable[[ServerSpec, str, dict], Awaitable[None]] | None = None,
        max_backoff: float = 30.0,
    ):
        self._on_request = on_request
        self._on_notification = on_notification
        self.max_backoff = max_backoff
        self._entries: dict[tuple[str, str], _Entry] = {}

    async def get(self, spec: ServerSpec) -> UpstreamSession:
        entry = self._entries.setdefault(_key(spec), _Entry(spec))
        async with entry.lock:
            loop = asyncio.get_running_loop()
            if entry.session is not None:
                if entry.session.alive and entry.spec == spec:
                    return entry.session
                await entry.session.aclose()
                entry.session = None
                if entry.spec != spec or loop.time() - entry.opened_at >= self.max_backoff:
                    entry.failures = 0  # a new configuration, or a long healthy life, starts afresh
                else:
                    self._back_off(entry)
            entry.spec = spec
            wait = entry.retry_at - loop.time()
            if wait > spec.timeout:
                raise UpstreamError(
                    f"{spec.name}: failing repeatedly; the next attempt is in {wait:.1f}s", retryable=True
                )
            if wait > 0:
                await asyncio.sleep(wait)
            try:
                entry.session = await connect(
                    spec,
                    on_request=self._bind(self._on_request, spec),
                    on_notification=self._bind(self._on_notification, spec),
                )
            except AuthorizationRequired:
                raise  # not the server failing: a person's Connect mends it, and the next try must not wait
            except UpstreamError:
                self._back_off(entry)
                raise
            entry.opened_at = loop.time()
            await self._resubscribe(entry)
            return entry.session

    async def subscribe(self, spec: ServerSpec, uri: str, holder) -> None:
        """Subscribe to `uri` on the server for `holder` (any hashable); the first holder subscribes upstream.

        The subscription outlives the session: a reopened session subscribes again.
        """
        session = await self.get(spec)
        holders = self._entries[_key(spec)].subscriptions
        if uri not in holders:
            await session.subscribe_resource(uri)
        holders.setdefault(uri, set()).add(holder)

    async def release(self, holder, name: str | None = None, uri: str | None = None) -> None:
        """Drop `holder`'s subscriptions (to one server, to one resource); the last holder's going unsubscribes."""
        entries = [entry for (server, _), entry in self._entries.items() if name is None or server == name]
        for entry in entries:
            for subscribed in list(entry.subscriptions) if uri is None else [uri]:
                holders = entry.subscriptions.get(subscribed, set())
                holders.discard(holder)
                if holders or subscribed not in entry.subscriptions:
                    continue
                del entry.subscriptions[subscribed]
                if entry.session is not None and entry.session.alive:
                    try:
                        await entry.session.unsubscribe_resource(subscribed)
                    except UpstreamError as exc:
                        log.info("%s: unsubscribing from %s failed: %s", entry.spec.name, subscribed, exc.message)

    async def _resubscribe(self, entry: _Entry) -> None:
        for uri in list(entry.subscriptions):
            try:
                await entry.session.subscribe_resource(uri)
            except UpstreamError as exc:
                log.warning("%s: subscribing again to %s failed: %s", entry.spec.name, uri, exc.message)

    async def close(self, name: str, identity: str | None = None) -> None:
        """Close the sessions to server `name`, every identity's (the server was disabled, changed or deleted) or
        one person's (their connection changed, and the session's transport holds its token).

        Each is taken under its entry's lock, so that a session being opened meanwhile is closed too,
        and out of the pool first, so that the next get opens afresh.
        """
        for key in [key for key in self._entries if key[0] == name and identity in (None, key[1])]:
            entry = self._entries.pop(key)
            async with entry.lock:
                session, entry.session = entry.session, None
            if session is not None:
                await session.aclose()

    async def keep_only(self, names: set[str]) -> None:
        """Close the sessions to every server not named."""
        unnamed = {name for name, _ in self._entries} - names
        await asyncio.gather(*(self.close(name) for name in unnamed), return_exceptions=True)

    async def close_all(self) -> None:
        entries, self._entries = list(self._entries.values()), {}
        await asyncio.gather(
            *(entry.session.aclose() for entry in entries if entry.session is not None), return_exceptions=True
        )

    def _back_off(self, entry: _Entry) -> None:
        entry.failures += 1
        delay = min(FIRST_BACKOFF_SECONDS * 2 ** (entry.failures - 1), self.max_backoff)
        entry.retry_at = asyncio.get_running_loop().time() + delay

    @staticmethod
    def _bind(handler, spec: ServerSpec):
        return functools.partial(handler, spec) if handler is not None else None


_POOLS: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, SessionPool]" = weakref.WeakKeyDictionary()


def running_loop_pool(make: Callable[[], SessionPool]) -> SessionPool:
    """The running event loop's pool, made on first use: in a web process one loop serves the whole process.

    Sessions belong to the loop that opened them, so a pool is never shared across loops.
    """
    loop = asyncio.get_running_loop()
    if loop not in _POOLS:
        _POOLS[loop] = make()
    return _POOLS[loop]
