"""Long-lived sessions, one per server, for one event loop (the gateway's, inside daphne)."""

import asyncio
import functools
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from .errors import UpstreamError
from .session import UpstreamSession, connect
from .spec import ServerSpec

FIRST_BACKOFF_SECONDS = 0.5


@dataclass(eq=False)
class _Entry:
    spec: ServerSpec
    session: UpstreamSession | None = None
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    failures: int = 0  # connects that failed, or sessions that died young, in a row
    retry_at: float = 0.0
    opened_at: float = 0.0


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
        self._entries: dict[str, _Entry] = {}

    async def get(self, spec: ServerSpec) -> UpstreamSession:
        entry = self._entries.setdefault(spec.name, _Entry(spec))
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
            except UpstreamError:
                self._back_off(entry)
                raise
            entry.opened_at = loop.time()
            return entry.session

    async def close(self, name: str) -> None:
        """Close the session to server `name`, if any: the server was disabled, changed or deleted.

        Taken under the entry's lock, so that a session being opened meanwhile is closed too,
        and out of the pool first, so that the next get opens afresh.
        """
        entry = self._entries.pop(name, None)
        if entry is None:
            return
        async with entry.lock:
            session, entry.session = entry.session, None
        if session is not None:
            await session.aclose()

    async def keep_only(self, names: set[str]) -> None:
        """Close the sessions to every server not named."""
        await asyncio.gather(*(self.close(name) for name in set(self._entries) - names), return_exceptions=True)

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
    """The running event loop's pool, made on first use: under daphne one loop serves the whole process.

    Sessions belong to the loop that opened them, so a pool is never shared across loops.
    """
    loop = asyncio.get_running_loop()
    if loop not in _POOLS:
        _POOLS[loop] = make()
    return _POOLS[loop]
