"""Server-Sent Events answers: one request's notifications and its response, or a long-lived change feed.

Both are async generators that gateway.application iterates after sending the headers. When
the client goes away, it cancels the task iterating them; the `finally` blocks below pass that
on to the work the stream was carrying.
"""

import asyncio
import logging
import threading
from collections import Counter, deque
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable

from django.conf import settings

from approvals.gateway.http import Refused, Response, error_response, jsonrpc_response
from approvals.live import events, waiting
from approvals.protocol import jsonrpc
from approvals.protocol.jsonrpc import INTERNAL_ERROR, INVALID_REQUEST, JsonRpcError, Request

log = logging.getLogger(__name__)

KEEP_ALIVE = b": keep-alive\n\n"
# An ASGI server may hold the headers until the first body bytes (daphne, which the tests' in-thread console
# runs, does): a stream opens with a comment so that its client sees it open soon, not only at the first event.
OPENING = b": stream open\n\n"
# An answer's first event ready within this time carries the opening comment with it, one message to the server
# rather than two (each wakes granian's thread, and writes to the socket); a quieter stream sends it alone then.
OPENING_WAIT_SECONDS = 0.05
SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}

Emit = Callable[[dict], Awaitable[None]]


class Final(bytes):
    """A stream's last chunk: sent with the end of the body, one message to the server rather than two."""


class OpenStreams:
    """The SSE streams this process holds open, counted per token and per legacy session, each count capped.

    Counted in the process rather than a shared store: a stream lives and dies with the
    process that holds it, so no count can outlive its stream.
    """

    def __init__(self):
        self.counts: Counter = Counter()
        # Counted from the loop, and read by tests and pages from other threads.
        self.lock = threading.Lock()

    @staticmethod
    def keys(token_pk, session_id: str) -> list[tuple]:
        keys = [("token", token_pk, settings.MCP_MAX_STREAMS_PER_TOKEN)]
        if session_id:
            keys.append(("session", session_id, settings.MCP_MAX_STREAMS_PER_SESSION))
        return keys

    def full(self, keys: list[tuple]) -> str | None:
        for kind, key, cap in keys:
            if cap and self.counts[kind, key] >= cap:
                whose = "this client token" if kind == "token" else "this MCP session"
                return f"Too many open streams: {whose} has {cap} streams open, the most it may; close one first"
        return None

    def refusal(self, token_pk, session_id: str) -> str | None:
        """Why one more stream may not open now, or None."""
        with self.lock:
            return self.full(self.keys(token_pk, session_id))

    def take(self, token_pk, session_id: str) -> Callable[[], None] | str:
        """A release for one more stream, or why there may be none."""
        keys = self.keys(token_pk, session_id)
        with self.lock:
            refused = self.full(keys)
            if refused:
                return refused
            for kind, key, _ in keys:
                self.counts[kind, key] += 1
        released = False

        def release():
            nonlocal released
            with self.lock:
                if not released:
                    released = True
                    for kind, key, _ in keys:
                        self.counts[kind, key] -= 1
                        if not self.counts[kind, key]:
                            del self.counts[kind, key]

        return release

    def count(self, kind: str, key) -> int:
        with self.lock:
            return self.counts[kind, key]


OPEN_STREAMS = OpenStreams()


class EventStream(Response):
    """An SSE answer whose events are closed, with the work they carry, within the request however it ends.

    Closed here rather than when collected, which would be later, in a task outside the request, whose
    thread-sensitive work would start a thread (and a database connection) that nothing gives back. Its
    place in OPEN_STREAMS goes back with close(), which also runs when the client left before the first
    event was read.
    """

    def __init__(self, events: AsyncGenerator[bytes], release: Callable[[], None], headers: dict):
        super().__init__(status=200, headers={"Content-Type": "text/event-stream", **headers})
        self.events, self.release = events, release

    async def send_to(self, send):
        await send(self.start([]))
        try:
            async for chunk in self.events:
                final = type(chunk) is Final
                await send({"type": "http.response.body", "body": chunk, "more_body": not final})
                if final:
                    return
            await send({"type": "http.response.body", "body": b""})
        finally:
            # Passes the end on to the events' own `finally`, which cancels the work they carry.
            await self.events.aclose()

    def close(self):
        self.release()


def sse_response(
    events: AsyncGenerator[bytes], token, session_id: str = "", headers: dict | None = None, msg_id=None
) -> EventStream:
    """The events as an SSE answer; 429 with a JSON-RPC error when the token or session holds its most streams."""
    release = OPEN_STREAMS.take(token.pk, session_id)
    if isinstance(release, str):
        raise Refused(error_response(JsonRpcError(INVALID_REQUEST, release), 429, msg_id, headers))
    return EventStream(events, release, {**SSE_HEADERS, **(headers or {})})


def event(message: dict) -> bytes:
    return b"event: message\ndata: " + jsonrpc.encode(message) + b"\n\n"


async def response_events(respond: Callable[[Emit], Awaitable[dict]]) -> AsyncIterator[bytes]:
    """What `respond(emit)` emits, keep-alives while it is quiet, then the message it returns, last.

    `respond` must return its final message rather than raise. It runs as a task of
    its own so that keep-alives flow while it waits, and it is cancelled, and
    waited for, when the stream ends early.
    """
    loop = asyncio.get_running_loop()
    queue: deque[dict] = deque()
    # The wait under way for a message, the task's end or the keep-alive's time, whichever comes first: one future
    # rather than a task reading a queue and asyncio.wait's own future and callbacks, at every wait.
    woken: asyncio.Future | None = None

    def wake(*_):
        if woken is not None and not woken.done():
            woken.set_result(None)

    async def emit(message: dict):
        queue.append(message)
        wake()

    task = asyncio.create_task(respond(emit))
    task.add_done_callback(wake)
    # Sent before the first event, or alone once the stream was quiet for OPENING_WAIT_SECONDS.
    opening = OPENING
    try:
        while True:
            if queue:
                yield opening + event(queue.popleft())
                opening = b""
            elif task.done():
                yield Final(opening + event(task.result()))
                return
            else:
                woken = loop.create_future()
                quiet = settings.MCP_SSE_KEEPALIVE_SECONDS
                timer = loop.call_later(min(quiet, OPENING_WAIT_SECONDS) if opening else quiet, wake)
                try:
                    await woken
                finally:
                    timer.cancel()
                if not queue and not task.done():
                    yield opening or KEEP_ALIVE
                    opening = b""
    finally:
        if not task.done():
            task.cancel()
            # The task records the cancellation itself (the call's row, its audit event): let it finish.
            await asyncio.wait({task})


async def answer_request(
    ctx,
    request: Request,
    work: Callable[[Emit], Awaitable[dict]],
    *,
    stream: bool,
    finish: Callable[[dict], dict],
    error_status: Callable[[int], int],
    headers: dict | None = None,
):
    """The response to a request whose answer may wait: `work(emit)`'s result, dressed by `finish` for the era.

    On an SSE stream when `stream` (what `work` emits, keep-alives while it is quiet; the
    work runs as the stream's own task, so the client's closing the stream cancels it, as
    the spec says it must), else as one JSON answer with nothing before it. `ctx` is the
    request's ClientContext (tokens.context).
    """

    async def respond(emit: Emit) -> dict:
        try:
            result = await work(emit)
        except Refused:
            raise
        except JsonRpcError as exc:
            return jsonrpc.error(request.id, exc)
        except Exception:
            log.exception("%s failed in the console", request.method)
            return jsonrpc.error(request.id, JsonRpcError(INTERNAL_ERROR, "Internal error"))
        return jsonrpc.result(request.id, finish(result))

    if stream:
        return sse_response(response_events(respond), ctx.token, ctx.session_id, headers, request.id)
    message = await respond(nowhere)
    status = error_status(message["error"]["code"]) if "error" in message else 200
    return jsonrpc_response(message, status, headers)


async def nowhere(message: dict):
    # A JSON response has no room for notifications before it.
    pass


async def change_events(
    first: Callable[[], Awaitable[list[dict]]],
    notifications_for: Callable[[dict], Awaitable[list[dict]]],
    still_wanted: Callable[[], Awaitable[bool]],
    finish: Callable[[], Awaitable[None]] | None = None,
) -> AsyncIterator[bytes]:
    """The messages `first()` makes, then what `notifications_for` makes of each catalog event, until the client leaves.

    The events are the catalog's changes and the resource updates upstream servers
    announce (see live.events). `still_wanted` is asked at each keep-alive; when it
    answers False the stream ends. `finish` runs however it ends, once `first` ran:
    what `first` takes up (subscriptions) is taken only by a stream that started.
    """
    try:
        # Joined before the first message goes out, so no change after it can be missed.
        async with waiting.listening(events.CATALOG) as changes:
            yield OPENING
            for message in await first():
                yield event(message)
            while True:
                message = await changes.next(timeout=settings.MCP_SSE_KEEPALIVE_SECONDS)
                if message is None:
                    if not await still_wanted():
                        return
                    await changes.rejoin()
                    yield KEEP_ALIVE
                    continue
                for notification in await notifications_for(message):
                    yield event(notification)
    finally:
        if finish is not None:
            await finish()
