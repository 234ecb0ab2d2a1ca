"""A 2026-07-28 server's change notifications: one `subscriptions/listen` stream, re-opened as its filter changes.

That era has no GET stream and no `resources/subscribe`: a client asks for list
changes and resource updates by a listen request whose answer stays open. A
session with a notification handler keeps one such stream for the lists the
server says change (`listChanged` in its capabilities) and for the resources
subscribed through it; the notifications reach the session's handler like any
other. A stream that ends or fails is opened again after a pause; a quiet
stream that outlives the server's timeout is simply opened again.
"""

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from .errors import UpstreamError

log = logging.getLogger(__name__)

ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
# The filter's flag for each capability whose list may change.
LIST_FLAGS = {"tools": "toolsListChanged", "prompts": "promptsListChanged", "resources": "resourcesListChanged"}
PAUSE_SECONDS = 1.0

Listen = Callable[[dict], Awaitable[dict]]


def list_flags(capabilities: dict) -> dict[str, bool]:
    """The listen filter's flags for every list the server says it announces changes of."""
    return {
        flag: True
        for capability, flag in LIST_FLAGS.items()
        if isinstance(capabilities.get(capability), dict) and capabilities[capability].get("listChanged") is True
    }


class Listening:
    """The session's one listen stream; `listen(filter)` sends the request and returns when the stream ends."""

    def __init__(self, name: str, listen: Listen, flags: dict[str, bool], timeout: float):
        self.name, self._listen, self._flags, self._timeout = name, listen, flags, timeout
        self.uris: set[str] = set()
        self._changed = asyncio.Event()
        self._acknowledged = asyncio.Event()
        self._task: asyncio.Task | None = None

    async def start(self) -> None:
        """Start listening, and wait (within the timeout) for the first acknowledgement, so no change is missed."""
        self._task = asyncio.create_task(self._run())
        if self.filter():
            try:
                async with asyncio.timeout(self._timeout):
                    await self._acknowledged.wait()
            except TimeoutError:
                log.warning("%s: subscriptions/listen was not acknowledged; listening on regardless", self.name)

    async def subscribe(self, uri: str) -> None:
        """Add `uri` to the stream's filter, once the server acknowledged the stream that carries it."""
        if uri in self.uris:
            return
        self.uris.add(uri)
        await self._refilter()

    async def unsubscribe(self, uri: str) -> None:
        if uri in self.uris:
            self.uris.discard(uri)
            await self._refilter()

    def acknowledged(self) -> None:
        self._acknowledged.set()

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    def filter(self) -> dict:
        wanted: dict = dict(self._flags)
        if self.uris:
            wanted["resourceSubscriptions"] = sorted(self.uris)
        return wanted

    async def _refilter(self) -> None:
        self._acknowledged.clear()
        self._changed.set()
        if not self.filter():
            return
        try:
            async with asyncio.timeout(self._timeout):
                await self._acknowledged.wait()
        except TimeoutError:
            raise UpstreamError(
                f"{self.name}: subscriptions/listen was not acknowledged within {self._timeout:g}s", retryable=True
            ) from None

    async def _run(self) -> None:
        while True:
            self._changed.clear()
            wanted = self.filter()
            if not wanted:
                await self._changed.wait()
                continue
            stream = asyncio.ensure_future(self._listen(wanted))
            changed = asyncio.ensure_future(self._changed.wait())
            try:
                await asyncio.wait({stream, changed}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                changed.cancel()
                if not stream.done():
                    stream.cancel()
                await asyncio.gather(stream, changed, return_exceptions=True)
            if self._changed.is_set():
                continue
            if not stream.cancelled() and isinstance(stream.exception(), UpstreamError):
                log.debug("%s: the listen stream ended: %s", self.name, stream.exception().message)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(PAUSE_SECONDS):
                    await self._changed.wait()
