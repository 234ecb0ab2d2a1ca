"""Channel-layer groups and the small typed events sent through them.

Every send happens after commit, so a listener that re-reads the database on an
event always finds what the event announces.
"""

import asyncio
import functools
import hashlib
import logging
import threading
import weakref
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from contextlib import contextmanager
from contextvars import ContextVar

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction
from django.dispatch import Signal

OPERATORS = "operators"
CATALOG = "catalog"
# Every event loop holding upstream sessions (calls.runner): close those to a server that was retired.
UPSTREAM = "upstream"
# The event loop serving this request or socket; contextvars follow sync_to_async into worker threads.
SERVING_LOOP: ContextVar[asyncio.AbstractEventLoop | None] = ContextVar("serving_loop", default=None)

log = logging.getLogger(__name__)


def call_group(call_id) -> str:
    return f"call.{call_id}"


def input_group(input_id) -> str:
    return f"input.{input_id}"


def user_group(user_id) -> str:
    return f"user.{user_id}"


def session_group(session_key: str) -> str:
    # Hashed: a session key is a credential, and group names are visible to whoever watches Redis.
    return f"session.{hashlib.sha256(session_key.encode()).hexdigest()[:40]}"


def served_by_its_loop(app):
    """ASGI middleware: synchronous code under `app` may hand its event loop work without waiting for it."""

    async def serve(scope, receive, send):
        SERVING_LOOP.set(asyncio.get_running_loop())
        return await app(scope, receive, send)

    return serve


def send_after_commit(*sends: tuple[str, dict]):
    """Send each (group, message) once the transaction commits, all at once.

    Under a web process the event loop sends them while the committing thread goes
    on with its request: the answer to a client never waits for the operators' news.
    Elsewhere (a celery worker, a command) the thread sends and waits.
    """

    def send():
        loop = SERVING_LOOP.get()
        if loop is None or loop.is_closed():
            async_to_sync(send_all)(sends)
        else:
            to_the_loop(loop, outbox(loop).add, sends)

    transaction.on_commit(send)


async def send_all(sends: Sequence[tuple[str, dict]]):
    """All at once, in order (the layer's group_send_many): on Redis one round trip, where a send apiece would each
    cost one. One failing keeps none of the others from being sent; the first failure is raised once all were
    tried."""
    await get_channel_layer().group_send_many(sends)


class Outbox:
    """One event loop's news, sent in the order the commits came, nobody waiting: one task at a time, which takes
    whatever queued while it sent in one go (a batch's commits, those of the next batch), rather than a task per
    commit whose sends would interleave with the others'."""

    def __init__(self):
        self.queued: list[tuple[str, dict]] = []
        self.sending: asyncio.Task | None = None

    def add(self, sends: tuple[tuple[str, dict], ...]):
        self.queued.extend(sends)
        if self.sending is None:
            self.sending = asyncio.ensure_future(self.send())

    async def send(self):
        try:
            while self.queued:
                sends, self.queued = self.queued, []
                try:
                    await send_all(sends)
                except Exception as exc:
                    log_send_failure(exc)
        finally:
            # Dropped once done, so that the task does not keep its loop (the key of _OUTBOXES) alive.
            self.sending = None


_OUTBOXES: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Outbox]" = weakref.WeakKeyDictionary()


def outbox(loop: asyncio.AbstractEventLoop) -> Outbox:
    if loop not in _OUTBOXES:
        _OUTBOXES[loop] = Outbox()
    return _OUTBOXES[loop]


_gathering = threading.local()


@contextmanager
def gathered_for_the_loop(loop: asyncio.AbstractEventLoop):
    """Within it, what this thread hands to `loop` (to_the_loop) is kept in the list it gives, for the loop to run
    once the thread's work is back (run_gathered): the loop's batch of writes, whose commit announces each of its
    calls, then wakes the loop once rather than once per call."""
    _gathering.loop, _gathering.callbacks = loop, []
    try:
        yield _gathering.callbacks
    finally:
        _gathering.loop, _gathering.callbacks = None, None


def to_the_loop(loop: asyncio.AbstractEventLoop, callback: Callable, *args):
    """`callback(*args)` on `loop`, from a thread: at once, or with what this thread gathers for it
    (gathered_for_the_loop)."""
    if getattr(_gathering, "loop", None) is loop:
        _gathering.callbacks.append(functools.partial(callback, *args))
    else:
        loop.call_soon_threadsafe(callback, *args)


def run_gathered(callbacks: list[Callable]):
    """On the loop: what a thread gathered for it, in order; one failing keeps none of the others from running."""
    for callback in callbacks:
        try:
            callback()
        except Exception:
            log.exception("work handed to the event loop failed")


def log_failed_send(future: Future | asyncio.Future):
    if not future.cancelled() and future.exception() is not None:
        log_send_failure(future.exception())


def log_send_failure(exc: BaseException):
    # Nobody awaits these sends; their listeners re-read the database now and then anyway.
    log.error("an event could not be sent to the channel layer", exc_info=exc)


def to_waiters(group: str, kind: str, **fields) -> tuple[str, dict]:
    """A wake-up for the waits on `group`: it names the group, since one channel of a process listens for many."""
    return group, {"type": kind, "group": group, **fields}


# A call or an input request changed: sent with the `row` and the live `event` it is (call.pending, input.answered...),
# inside the transaction that changed it. approvals.actions.announce, connected as the app starts, tells everyone who
# follows it: the live groups below, the API's journal and webhooks. Its receivers are kept per sender, since every
# call's change sends it.
row_changed = Signal(use_caching=True)


def changed(row, event: str, decided: bool = False):
    """Announce that this call or input request changed, as `event` (`decided`: by this change, a rule's or a
    person's decision)."""
    row_changed.send(sender=type(row), row=row, event=event, decided=decided)


def send_call_event(call, event: str):
    """Wake the request waiting on this call, wherever it lives, and tell the operators."""
    send_after_commit(
        to_waiters(call_group(call.pk), "call.update", status=call.status),
        (OPERATORS, {"type": "call.event", "event": event, "call_id": call.pk, "status": call.status}),
    )


# What a call's page shows of an upstream's progress message; the rest is the upstream's to keep.
PROGRESS_TEXT = 300


def a_number(value):
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


async def call_progress(call_id, params: dict):
    """An upstream reported progress on a forwarded call: the operators' pages of that call show it.

    Sent at once and kept nowhere: it is news from outside, with no row behind it. The values
    are the upstream's, so only numbers and a bounded text go on. A send that fails is only
    logged: the call goes on without its page knowing.
    """
    message = params.get("message")
    event = {
        "type": "call.progress",
        "call_id": call_id,
        "progress": a_number(params.get("progress")),
        "total": a_number(params.get("total")),
        "message": message[:PROGRESS_TEXT] if isinstance(message, str) else "",
    }
    try:
        await get_channel_layer().group_send(OPERATORS, event)
    except Exception:
        log.exception("a call's progress could not be sent to the channel layer")


# The lists a client may be told changed; a change names those it touched.
LISTS = ("tools", "resources", "prompts")


def catalog_changed(server_id, lists=LISTS):
    """The server's tools, resources or prompts (`lists`) changed: clients' streams say so, operators' pages show it."""
    send_after_commit(
        (CATALOG, {"type": "catalog.changed", "server_id": server_id, "lists": list(lists)}),
        (OPERATORS, {"type": "catalog.event", "event": "catalog.changed", "server_id": server_id}),
    )


async def resource_updated(server_name: str, uri: str):
    """An upstream server said a resource changed: every process's streams subscribed to it pass that on.

    Sent at once: it is news from outside, with no transaction behind it.
    """
    message = {"type": "resource.updated", "server": server_name, "uri": uri}
    await get_channel_layer().group_send(CATALOG, message)


def subscriptions_released(holder: str, uri: str | None = None):
    """A client no longer wants a resource (or any, without `uri`): each process drops its upstream subscriptions."""
    send_after_commit((UPSTREAM, {"type": "upstream.released", "holder": holder, "uri": uri}))


def upstream_retired(server_name: str, identity: str | None = None):
    """A server was disabled, changed or deleted: every process closes its sessions to it (stdio children stop).
    With `identity`, one person's connection to it changed: only that person's sessions close."""
    message = {"type": "upstream.retired", "server": server_name}
    if identity is not None:
        message["identity"] = identity
    send_after_commit((UPSTREAM, message))


def server_status(server):
    """A server's health changed: operators' pages show it beside its calls and in the server list."""
    send_after_commit(
        (OPERATORS, {"type": "server.event", "event": "server.status", "server_id": server.pk, "health": server.health})
    )


def access_changed(user_ids):
    """Tell these people's open sockets to check again whether they may watch calls."""
    if user_ids:
        send_after_commit(*((user_group(pk), {"type": "access.changed"}) for pk in sorted(set(user_ids))))


def session_ended(session_key: str):
    """Close the sockets this session opened: its user signed out."""
    send_after_commit((session_group(session_key), {"type": "access.ended"}))


def send_input_event(request, event: str):
    """Wake the handler waiting for this input request and the request relaying its call, and tell the operators."""
    send_after_commit(
        to_waiters(input_group(request.pk), "input.update", status=request.status),
        to_waiters(call_group(request.call_id), "call.update", status="", input_id=request.pk),
        (OPERATORS, {"type": "input.event", "event": event, "input_id": request.pk, "call_id": request.call_id}),
    )
