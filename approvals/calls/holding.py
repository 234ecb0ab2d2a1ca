"""The calls a web process holds: one lease renewal and one re-read per interval for all of them.

A call is held by the request that brought it (and, for a 2026-07-28 client answering its own
input requests, by the task running it upstream) until it is answered. Each event loop keeps
the ids of the calls it holds; every CALL_REREAD_SECONDS one task renews their lease in one
UPDATE and, in one SELECT, finds which of those waiting for a decision are decided, waking
only those. A held call costs its id in a set: no query, timer or task of its own.

The lease is what tells the rest of the console that the process still holds the call:
ending.end_abandoned_calls ends the open calls whose lease lapsed.

The calls a loop records or cancels are written by its batched writer (calls/batched_writes).
"""

import asyncio
import contextlib
import contextvars
import functools
import logging
import weakref
from collections import Counter
from datetime import timedelta

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from approvals.calls import batched_writes, ending
from approvals.calls.models import Call
from approvals.db.shared_threads import connection_given_back
from approvals.live import events, waiting

log = logging.getLogger(__name__)


def lease_end():
    return timezone.now() + timedelta(seconds=settings.CALL_LEASE_SECONDS)


# Run in the loop's shared threads, which live on: a connection kept there is one the pool lacks.
@connection_given_back
def renew(held: list[int], waiting: list[int]) -> list[int]:
    """Extend the lease of the `held` calls still open, and name those of `waiting` no longer pending.

    A lease is extended only once half of it is left, not at every re-read: each extension is a new
    version of the call's row, and thousands of held calls would otherwise leave the table and its
    indexes thick with dead ones between two vacuums, slowing every read of the queue.
    """
    due = timezone.now() + timedelta(seconds=settings.CALL_LEASE_SECONDS / 2)
    with transaction.atomic():
        # Rows a write holds are skipped, to be renewed at the next re-read: waiting for them, while the
        # write waits for rows this holds, would deadlock the two.
        free = Call.objects.select_for_update(skip_locked=True).filter(
            id__any_of=held, status__in=Call.OPEN, lease_expires_at__lt=due
        )
        Call.objects.filter(id__any_of=list(free.values_list("pk", flat=True))).update(lease_expires_at=lease_end())
    if not waiting:
        return []
    decided = Call.objects.filter(id__any_of=waiting).exclude(status=Call.Status.PENDING)
    return list(decided.values_list("pk", flat=True))


class Held:
    """The calls one event loop holds, and the task that renews and re-reads them while there are any."""

    def __init__(self):
        self.calls: Counter[int] = Counter()  # how many tasks of the loop hold each call
        self.waiting: dict[int, asyncio.Task] = {}  # of those, the ones waiting for a decision, and the task waiting
        self.cut: set[int] = set()  # of those, the ones whose waiting task was cancelled, at the last re-read
        self.renewing: asyncio.Task | None = None

    def hold(self, call_id):
        self.calls[call_id] += 1
        if self.renewing is None or self.renewing.done():
            # A context of its own: the request that happened to come first may end long before the task does.
            loop = asyncio.get_running_loop()
            self.renewing = loop.create_task(self.renew_while_held(), context=contextvars.Context())

    def release(self, call_id):
        self.calls[call_id] -= 1
        if self.calls[call_id] <= 0:
            del self.calls[call_id]
            self.waiting.pop(call_id, None)

    async def renew_while_held(self):
        while self.calls:
            await asyncio.sleep(settings.CALL_REREAD_SECONDS)
            if not self.calls:
                return
            try:
                # Off the request threads: this must not queue behind a slow page or call.
                decided = await sync_to_async(renew, thread_sensitive=False)(list(self.calls), list(self.waiting))
            except Exception:
                log.exception("the leases of %d held calls could not be renewed", len(self.calls))
                continue
            for call_id in decided:
                waiting.wake_here(events.call_group(call_id))
            self.end_the_cut()

    def end_the_cut(self):
        """Cancel the waiting calls whose request was cancelled two re-reads ago and waits still.

        A request cancelled ends its call itself, at once. One that went on waiting lost its
        cancellation somewhere below (a library that swallows one as its own wait completes):
        without this its call would stay pending, and approvable, until it expires.
        """
        cut = {call_id for call_id, task in self.waiting.items() if task is not None and task.cancelling()}
        for call_id in cut & self.cut:
            log.error("call %s still waited after its request was cancelled; cancelling it", call_id)
            batched_writes.write(
                functools.partial(ending.end_pending, call_id, Call.Status.CANCELLED, ending.ABANDONED)
            )
        self.cut = cut


_HELD: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Held]" = weakref.WeakKeyDictionary()


def loop_held() -> Held:
    loop = asyncio.get_running_loop()
    if loop not in _HELD:
        _HELD[loop] = Held()
    return _HELD[loop]


@contextlib.contextmanager
def holding(call_id):
    """Hold the call for the block: its lease is renewed while the block runs."""
    held = loop_held()
    held.hold(call_id)
    try:
        yield
    finally:
        held.release(call_id)


@contextlib.contextmanager
def waiting_for_decision(call_id):
    """Within holding(call_id): the batched re-read wakes the call's group once the call is no longer pending."""
    held = loop_held()
    held.waiting[call_id] = asyncio.current_task()
    try:
        yield
    finally:
        held.waiting.pop(call_id, None)


async def held_while(call_id, work):
    """Await `work` holding the call: for a call run in a task that outlives the request that started it."""
    with holding(call_id):
        return await work
