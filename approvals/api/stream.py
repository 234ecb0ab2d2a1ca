"""`GET /api/v1/events`: the queue page's events as Server-Sent Events, resumable with Last-Event-ID.

The stream reads the journal's window (approvals.live.journal), so it holds no
database connection while it waits. Like the queue page's websocket it checks that its
user may still watch calls when told that their access changed (a role, a deactivation,
a revoked key: the `user.<id>` group) or their session ended, and every
SOCKET_ACCESS_RECHECK_SECONDS should that news be lost; it ends when not.
"""

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator

from django.conf import settings
from django.http import HttpRequest, StreamingHttpResponse
from ninja import Router
from ninja import Status as Answer

from approvals.api import keys
from approvals.api.auth import require
from approvals.api.schemas import Error
from approvals.db.consumer_db import db_sync_to_async
from approvals.live import events as live_events
from approvals.live import journal, waiting
from approvals.live.access_changes import signed_in_user
from approvals.roles import VIEW_CALLS, can_view_calls

router = Router(tags=["events"])
RETRY_MS = 2000
EVENT_STREAM = {
    "description": (
        "An endless text/event-stream. Each event has an `id`, an `event` name (call.pending, call.approval, "
        "call.decided, call.forwarded, call.finished, call.expired, call.cancelled, input.pending, "
        "input.answered, input.expired, …) and JSON `data` naming what changed (`call_id`, `input_id`, "
        "`status`). A comment line keeps an idle stream open; `stream.reset` says events after the given "
        "Last-Event-ID left the window; `access.ended` closes a stream whose user may no longer watch calls."
    ),
    "content": {"text/event-stream": {"schema": {"type": "string"}}},
}


def frame(event: str, data: dict, event_id: str | None = None) -> str:
    lines = [f"id: {event_id}"] if event_id else []
    return "\n".join([*lines, f"event: {event}", f"data: {json.dumps(data, separators=(',', ':'))}", "", ""])


def still_allowed(user_pk, api_key: str | None, session_key: str | None) -> bool:
    user = keys.user_of(api_key) if api_key else signed_in_user(session_key)
    return user is not None and user.pk == user_pk and can_view_calls(user)


async def event_stream(after: str | None, user_pk, api_key, session_key) -> AsyncIterator[str]:
    window = journal.window()
    lost = after is not None and await window.lost_after(after)
    if after is None:
        after = await window.latest()
    # Sent once the stream's starting point is fixed: a client that has read it misses nothing that follows.
    yield f"retry: {RETRY_MS}\n\n"
    if lost:
        yield frame("stream.reset", {"detail": "Events after Last-Event-ID left the window: read /api/v1/queue again."})
    recheck_at = time.monotonic() + settings.SOCKET_ACCESS_RECHECK_SECONDS
    async with contextlib.AsyncExitStack() as stack:
        told = [await stack.enter_async_context(waiting.listening(live_events.user_group(user_pk)))]
        if session_key:
            told.append(await stack.enter_async_context(waiting.listening(live_events.session_group(session_key))))
        while True:
            wait = min(settings.MCP_SSE_KEEPALIVE_SECONDS, max(recheck_at - time.monotonic(), 0.001))
            entries, news = await read_or_news(window, after, wait, told)
            for entry in entries:
                yield frame(entry.event, entry.data, entry.id)
                after = entry.id
            if not entries and not news:
                yield ": keep-alive\n\n"
            if news or time.monotonic() >= recheck_at:
                if not await db_sync_to_async(still_allowed)(user_pk, api_key, session_key):
                    yield frame("access.ended", {"detail": "Your access to the calls ended."})
                    return
                recheck_at = time.monotonic() + settings.SOCKET_ACCESS_RECHECK_SECONDS


async def read_or_news(window, after: str, wait: float, told) -> tuple[list, bool]:
    """The window's entries after `after`, or, should news of the user's access come first, none and True.

    A read cut short loses nothing: the next one starts from the same `after`.
    """
    reading = asyncio.ensure_future(window.read(after, wait))
    hearing = [asyncio.ensure_future(listener.next(wait)) for listener in told]
    try:
        await asyncio.wait({reading, *hearing}, return_when=asyncio.FIRST_COMPLETED)
        news = any(task.done() and task.result() is not None for task in hearing)
        if news and not reading.done():
            return [], True
        return await reading, news
    finally:
        for task in (reading, *hearing):
            task.cancel()
        await asyncio.gather(reading, *hearing, return_exceptions=True)


@router.get(
    "/events",
    response={400: Error, 401: Error, 403: Error},
    openapi_extra={
        "responses": {200: EVENT_STREAM},
        "parameters": [
            {
                "in": "header",
                "name": "Last-Event-ID",
                "required": False,
                "schema": {"type": "string", "pattern": journal.EVENT_ID.pattern},
                "description": "Resume after this event: the window keeps about the last 10,000.",
            }
        ],
    },
    summary="The queue's events as Server-Sent Events",
)
def events(request: HttpRequest):
    """What the queue page is told, for bots that react to new calls: ids are `<ms>-<n>`, and sending the last
    one seen as Last-Event-ID (as EventSource does on reconnecting) resumes without loss or repeats."""
    require(request, VIEW_CALLS)
    after = request.headers.get("Last-Event-ID", "").strip() or None
    if after is not None and journal.parse_id(after) is None:
        return Answer(400, {"detail": "Last-Event-ID must be an event id as the stream sent it, like 1732380000000-0."})
    session_key = None if getattr(request, "api_key", None) else request.session.session_key
    stream = event_stream(after, request.user.pk, getattr(request, "api_key", None), session_key)
    response = StreamingHttpResponse(stream, content_type="text/event-stream")
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"
    return response
