"""The loop's batched writer: the calls one event loop records, answers or cancels, written by one task in batches.

Each write is a piece of work (receiving a call, recording its result, cancelling it) that the loop's writer
runs in its next batch: up to WRITES_AT_ONCE in one transaction, with one append to the audit chain and the
reads a batch shares done once; a lone write goes at once, and what arrives while a batch runs waits for the
next. A write waits for no request, so a request cut short cannot leave it half done.
"""

import asyncio
import contextlib
import contextvars
import functools
import logging
import weakref
from collections.abc import Callable

from django.db import OperationalError, transaction

from approvals import driver
from approvals.audit import chain
from approvals.audit.chain import Actor
from approvals.calls import ending
from approvals.db import batch_reads, savepoints
from approvals.db.shared_threads import connection_given_back
from approvals.live import events
from approvals.observe import logs

log = logging.getLogger(__name__)


# Most calls one transaction records or cancels. A burst of thousands would otherwise start as many threads
# at once, all taking turns at the interpreter lock and queueing for SQLite's one writer or the pool's
# connections until some time out; in batches, each is written in a moment, in arrival order.
WRITES_AT_ONCE = 50


@connection_given_back
def write_together(works: list[Callable]) -> list[tuple]:
    """Run `works` in one transaction with one append to the audit chain: per work, (its result, None) or (None, error).

    Each work must be atomic itself: a savepoint within the batch, so that one failing leaves the others be. A
    batch of one work needs none: the work failing rolls back the batch.
    """
    outcomes = []
    alone = savepoints.left_out() if len(works) == 1 else contextlib.nullcontext()
    # The chain's append is the transaction's last statement: on PostgreSQL it commits with it.
    with transaction.atomic(), driver.held(), alone, chain.batch(last=True) as recorded, batch_reads.shared():
        for work in works:
            kept = len(recorded)
            try:
                outcomes.append((work(), None))
            except Exception as exc:
                # Its savepoint rolled back: its audit events go with it, and the locks its reads took.
                del recorded[kept:]
                batch_reads.forget()
                outcomes.append((None, exc))
    return outcomes


class Writes:
    """The calls one event loop records or cancels, written by one task of its own in batches.

    A write waits for no request: a request cut short (by its server, as its client left)
    cannot strand it half-done in a thread of that request's that nothing ends, holding a
    connection the pool never gets back.
    """

    def __init__(self):
        self.queue: list[tuple[Callable, asyncio.Future]] = []
        self.writing: asyncio.Task | None = None
        # The context every batch runs in, the writer's own: it names the loop that announcements go to.
        self.context: contextvars.Context | None = None

    def submit(self, work: Callable) -> asyncio.Future:
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        # With what the submitter's request bound for the log (its token, its trace): a call's last line names them.
        self.queue.append((logs.carried(work), future))
        if self.writing is None or self.writing.done():
            # A context of its own, not the request's that happened to come first.
            self.writing = loop.create_task(self.write_all(), context=contextvars.Context())
        return future

    async def write_all(self):
        if self.context is None:
            # Announcements after commit go through this loop (approvals.live.events.send_after_commit).
            events.SERVING_LOOP.set(asyncio.get_running_loop())
            self.context = contextvars.copy_context()
        while self.queue:
            batch, self.queue = self.queue[:WRITES_AT_ONCE], self.queue[WRITES_AT_ONCE:]
            outcomes = await self.write_batch([work for work, _ in batch])
            # Writes another transaction deadlocked (a revocation cancelling many calls) go again, once.
            again = [i for i, (_, error) in enumerate(outcomes) if isinstance(error, OperationalError)]
            if again:
                for i, outcome in zip(again, await self.write_batch([batch[i][0] for i in again]), strict=True):
                    outcomes[i] = outcome
            for (_, future), (result, error) in zip(batch, outcomes, strict=True):
                if not future.done():
                    if error is None:
                        future.set_result(result)
                    else:
                        future.set_exception(error)

    async def write_batch(self, works: list[Callable]) -> list[tuple]:
        loop = asyncio.get_running_loop()
        try:
            # In the loop's shared threads, as sync_to_async(thread_sensitive=False) would run it, less its carrying
            # of the caller's context there and back: one batch runs at a time, always in the writer's context, and
            # Django's connections are the thread's own whatever the context.
            outcomes, handed = await loop.run_in_executor(None, self.context.run, write_gathered, works, loop)
        except Exception as exc:
            return [(None, exc)] * len(works)
        # The batch's announcements, after its commit and before its requests go on.
        events.run_gathered(handed)
        return outcomes


def write_gathered(works: list[Callable], loop: asyncio.AbstractEventLoop) -> tuple[list[tuple], list[Callable]]:
    """write_together's outcomes, and what its commit hands to `loop`, gathered for the loop to run when they are
    back rather than each waking it from this thread."""
    with events.gathered_for_the_loop(loop) as handed:
        try:
            return write_together(works), handed
        except Exception as exc:
            # Whatever committed before the failure is announced all the same.
            return [(None, exc)] * len(works), handed


_WRITES: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Writes]" = weakref.WeakKeyDictionary()


def loop_writes() -> Writes:
    loop = asyncio.get_running_loop()
    if loop not in _WRITES:
        _WRITES[loop] = Writes()
    return _WRITES[loop]


def writes_queued() -> int:
    """How many writes wait for this loop's next batch."""
    return len(loop_writes().queue)


def write(work: Callable) -> asyncio.Future:
    """The outcome of `work` (recording or cancelling a call), run in this loop's next batch of writes."""
    return loop_writes().submit(work)


CLOSED = "the client closed the request"


def cancel_for_the_client(call_id, token) -> asyncio.Future:
    """The call's cancellation for its client, who closed the request: in this loop's next batch of writes, which
    goes on whatever becomes of the request."""
    cancelling = write(functools.partial(ending.cancel_running, call_id, CLOSED, Actor.client(token)))
    cancelling.add_done_callback(log_failed_cancel)
    return cancelling


def log_failed_cancel(cancelling: asyncio.Future):
    # Nobody may be left to await it; the call's lease then lapses and ending.end_abandoned_calls ends it.
    if not cancelling.cancelled() and cancelling.exception() is not None:
        log.error("a call whose request ended could not be cancelled", exc_info=cancelling.exception())
