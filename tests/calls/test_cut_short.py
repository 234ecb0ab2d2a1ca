"""Requests cut short at any moment from arrival to held: every call they recorded ends cancelled, at once.

A client may hang up while its call is still being recorded, while the batch that writes it
is in the database, or while an operator has yet to decide it; daphne may cancel the request
again ten seconds later. Whatever the moment, a recorded call must not stay pending, and so
approvable, for its whole timeout.
"""

import asyncio
import contextlib
import random
import time
from collections import Counter
from datetime import datetime

import pytest
from asgiref.sync import sync_to_async
from django.db.models import Count
from django.utils import timezone

from approvals.audit.models import AuditEvent
from approvals.calls import batched_writes, ending, holding, permissions, reads, runner
from approvals.calls.models import Call
from approvals.live import events, waiting
from approvals.policy import rules
from approvals.protocol import revisions
from approvals.tokens.context import ClientContext
from tests.calls.held import as_a_request, none_but_the_shared_threads
from tests.fixtures.calls import pending_call
from tests.fixtures.waiting import eventually

pytestmark = pytest.mark.django_db(transaction=True)

REQUESTS = 200
ROUNDS = 3
# How long the requests that were cut may take to end, their calls cancelled and written: well over the
# second it takes, so that a loaded machine does not fail the test, and far short of any timeout or lease.
ENDED_WITHIN = 15
# How soon a held call is cancelled once its request is cut: at once, with room for a burst of them on a loaded
# machine, and well short of the lease whose lapse would end it anyway.
CANCELLED_WITHIN = 10
PHASES = ("arriving", "writing", "held")


def context(token):
    return ClientContext(token, revisions.MODERN, "2026-07-28")


async def nowhere(message):
    pass


def request(token, tool, n):
    """One request's work: a tool call most often, now and then a coding agent's permission request or a resource
    read that a rule governs."""
    if n % 5 == 4:
        arguments = {"tool_name": "Bash", "input": {"command": f"ls {n}"}}
        params = {"name": permissions.APPROVAL_PROMPT.exposed_name, "arguments": arguments}
        return permissions.run_prompt(context(token), n, params, nowhere)
    if n % 5 == 3:
        uri = f"file://docs/{n}.md"
        read = reads.Read(Call.Kind.RESOURCE, tool.server, uri, {"uri": uri}, "d" * 64, jsonrpc_id=n)
        return reads.governed(context(token), read, never_run, nowhere)
    params = {"name": tool.exposed_name, "arguments": {"order_id": n, "amount": 5}}
    return runner.run_call(context(token), n, params, nowhere, tool=tool)


async def never_run():
    raise AssertionError("a read whose request was cut short reached its upstream")


class Cutter:
    """Cuts each request at the moment of its phase: on arrival after a few turns of the loop, while the
    batch writing its call is in the database, or once its call is held; some twice, as daphne does."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.loop = asyncio.get_running_loop()
        self.when_writing: list[asyncio.Task] = []
        self.held: dict[asyncio.Task, int] = {}  # the call each held request holds
        self.cut_at: dict[int, datetime] = {}  # when each held call's request was first cut
        self.cuts = Counter()

    def cut(self, task: asyncio.Task, phase: str):
        self.cuts[phase] += 1
        if task in self.held:
            self.cut_at.setdefault(self.held[task], timezone.now())
        task.cancel()
        if self.rng.random() < 0.3:
            self.loop.call_later(self.rng.random() * 0.05, task.cancel)

    async def on_arrival(self, task: asyncio.Task):
        for _ in range(self.rng.randrange(6)):
            await asyncio.sleep(0)
        self.cut(task, "arriving")

    def during_writes(self, write_together):
        """write_together, cutting the requests waiting for a batch from its database thread while it writes."""

        def writing(works):
            if self.when_writing:
                due, self.when_writing = self.when_writing, []
                self.loop.call_soon_threadsafe(lambda: [self.cut(task, "writing") for task in due])
                # Long enough for the cancellations to reach the tasks before the batch commits.
                time.sleep(0.01)
            return write_together(works)

        return writing

    def noting_the_held(self, waiting_for_decision):
        """waiting_for_decision, noting the request whose call it holds."""

        @contextlib.contextmanager
        def noting(call_id):
            with waiting_for_decision(call_id):
                self.held[asyncio.current_task()] = call_id
                yield

        return noting

    async def once_held(self, task: asyncio.Task):
        await eventually(lambda: task in self.held or task.done(), timeout=60, message="the call held")
        await asyncio.sleep(self.rng.random() * 0.2)
        self.cut(task, "held")


async def cut_at_random(token, tool, rng: random.Random) -> tuple[list[asyncio.Task], Cutter]:
    cutter = Cutter(rng)
    tasks, cutting = [], []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(batched_writes, "write_together", cutter.during_writes(batched_writes.write_together))
        patch.setattr(holding, "waiting_for_decision", cutter.noting_the_held(holding.waiting_for_decision))
        for n in range(REQUESTS):
            task = asyncio.create_task(as_a_request(request(token, tool, n)))
            phase = rng.choice(PHASES)
            if phase == "arriving":
                cutting.append(asyncio.create_task(cutter.on_arrival(task)))
            elif phase == "writing":
                cutter.when_writing.append(task)
            else:
                cutting.append(asyncio.create_task(cutter.once_held(task)))
            tasks.append(task)
            if rng.random() < 0.2:
                await asyncio.sleep(0)
        await asyncio.gather(*cutting)
        # The requests still arriving when the last batch began are cut once held.
        for task in [t for t in cutter.when_writing if not t.done()]:
            cutter.cut(task, "held")
    return tasks, cutter


@pytest.mark.parametrize("seed", range(ROUNDS))
async def test_it_cancels_every_call_whose_request_was_cut_at_any_moment(
    seed, client_token, refund_tool, open_connections, settings
):
    settings.MAX_PENDING_CALLS_PER_TOKEN = 0
    # A request that lost its cancellation has its call ended by the re-read (holding.Held.end_the_cut).
    settings.CALL_REREAD_SECONDS = 0.5
    await sync_to_async(rules.create_rule)(rules.RuleRequest("ask", applies_to="resource", name="reads asked"))
    tasks, cutter = await cut_at_random(client_token, refund_tool, random.Random(seed))
    cuts = cutter.cuts
    assert all(cuts[phase] for phase in PHASES), cuts

    done, left = await asyncio.wait(tasks, timeout=ENDED_WITHIN)
    assert not left, f"{len(left)} of {REQUESTS} requests still running {ENDED_WITHIN}s after they were cut: {cuts}"

    async def none_open():
        return not await Call.objects.filter(status__in=Call.OPEN).aexists()

    await eventually(none_open, timeout=ENDED_WITHIN, message="every call ended")
    statuses = Counter([status async for status in Call.objects.values_list("status", flat=True)])
    assert set(statuses) <= {Call.Status.CANCELLED}, statuses
    assert statuses[Call.Status.CANCELLED] >= cuts["held"], (statuses, cuts)
    cancellations = AuditEvent.objects.filter(action="call.cancelled").values("call_id").annotate(n=Count("id"))
    assert {row["n"] async for row in cancellations} <= {1}
    assert await cancellations.acount() == statuses[Call.Status.CANCELLED]

    answered = Call.objects.filter(pk__in=cutter.cut_at).values_list("pk", "answered_at")
    took = {pk: (at - cutter.cut_at[pk]).total_seconds() async for pk, at in answered}
    assert len(took) == len(cutter.cut_at) and max(took.values()) < CANCELLED_WITHIN, sorted(took.values())[-5:]

    held = holding.loop_held()
    assert not held.calls and not held.waiting
    writes = batched_writes.loop_writes()
    assert not writes.queue and writes.writing.done()
    await eventually(
        lambda: none_but_the_shared_threads(open_connections()),
        message=f"every connection given back: {open_connections()}",
    )


async def test_it_cancels_a_held_call_at_once_even_when_its_wake_up_comes_with_the_cut(client_token, refund_tool):
    task = asyncio.create_task(as_a_request(request(client_token, refund_tool, 1)))
    held = holding.loop_held()
    await eventually(lambda: held.waiting, message="the call held")
    (call_id,) = held.waiting

    # A wake-up of its group (the batched re-read, a message) and the client leaving, in the same turn of the loop.
    waiting.wake_here(events.call_group(call_id))
    task.cancel()

    done, _ = await asyncio.wait({task}, timeout=ENDED_WITHIN)
    assert done and task.cancelled()
    assert await Call.objects.filter(pk=call_id, status=Call.Status.CANCELLED).aexists()


async def test_it_cancels_a_held_call_whose_request_lost_its_cancellation(client_token, refund_tool, settings):
    settings.CALL_REREAD_SECONDS = 0.05
    call = await sync_to_async(pending_call)(client_token, refund_tool)
    stop = asyncio.Event()

    async def deaf_to_cancellation():
        # As a wait does whose library drops the cancellation that comes as it completes.
        with holding.holding(call.pk), holding.waiting_for_decision(call.pk):
            while not stop.is_set():
                with contextlib.suppress(asyncio.CancelledError):
                    await asyncio.sleep(0.01)

    waiting = asyncio.create_task(deaf_to_cancellation())
    await eventually(lambda: call.pk in holding.loop_held().waiting, message="the call held")
    waiting.cancel()

    async def cancelled():
        return await Call.objects.filter(pk=call.pk, status=Call.Status.CANCELLED).aexists()

    try:
        await eventually(cancelled, message="the call cancelled")
    finally:
        stop.set()
        await waiting
    ended = await Call.objects.aget(pk=call.pk)
    assert ended.reason == ending.ABANDONED
    assert await AuditEvent.objects.filter(call_id=call.pk, action="call.cancelled").acount() == 1
