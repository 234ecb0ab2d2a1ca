"""Running a call that its client follows as a task (calls.tasks), with no request waiting on it.

The request that brings the call gets its task at once. The process that received it then
drives the call in a task of its own: waits for the decision (expiring it at its deadline) and
runs it upstream once approved. Nothing of that is needed by anyone else: a held task has no
holder, only its row. Whoever first finds it approved takes it by the conditional move to
*forwarded* (ending.mark_forwarded, claiming it for its process): the driver woken by the
decision, or, should the process that received it be gone, the process answering a poll of
it. Exactly one move wins, so exactly one process runs the call; the winner holds it (its
lease renewed) until the upstream answers, as a request holding a call does.
"""

import asyncio
import dataclasses
import functools
import logging
from datetime import timedelta

from asgiref.sync import sync_to_async
from django.conf import settings
from django.utils import timezone

from approvals.calls import continuations, ending, expiry, holding, lifecycle, runner, tasks
from approvals.calls.models import Call
from approvals.catalog.models import Tool
from approvals.inputs import runner as input_runner
from approvals.live import events, waiting
from approvals.protocol.jsonrpc import INVALID_PARAMS, JsonRpcError
from approvals.tokens.context import ClientContext

log = logging.getLogger(__name__)
# The calls this process drives or runs detached, kept so that the loop does not lose the tasks doing it.
_RUNNING: dict[int, asyncio.Task] = {}


async def start(ctx: ClientContext, jsonrpc_id, params: dict, tool: Tool, requested_ttl=None) -> tuple:
    """Record a tools/call as a task and start driving it: (the call, None), or (None, the answer) when it was
    refused before it became a row. A call that ended at once (invalid, denied) is a task that ended."""
    arguments = params.get("arguments", {})
    arguments = {} if arguments is None else arguments
    if not isinstance(arguments, dict):
        raise JsonRpcError(INVALID_PARAMS, "tools/call needs a string 'name' and an object 'arguments'")
    if tool.status != Tool.Status.ACTIVE:
        return None, await sync_to_async(lifecycle.refuse_unreviewed)(ctx, tool)
    meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
    # No stream carries a task's wait, so none is needed for it.
    ctx = dataclasses.replace(ctx, streaming=False, unstreamed="")
    receive = functools.partial(
        lifecycle.receive_call,
        ctx,
        tool,
        arguments,
        jsonrpc_id,
        meta.get("progressToken"),
        task=tasks.new_task(requested_ttl),
    )
    call, answer = await runner.record_arrival(ctx, receive)
    if call is None:
        return None, answer
    if call.status in Call.OPEN:
        detach(call, drive(call, ctx))
    return call, None


async def hold_as_task(call: Call, ctx: ClientContext) -> dict:
    """A 2026-07-28 call held for a decision, answered as a task (runner.run_call's `held`): driven from here on."""
    call = await sync_to_async(tasks.make_task)(call)
    detach(call, drive(call, ctx))
    return {**tasks.modern_task_fields(call), "resultType": "task"}


def detach(call: Call, work) -> bool:
    """Run `work` for the call in a task of this process, unless one runs for it already."""
    if call.pk in _RUNNING:
        work.close()
        return False
    task = asyncio.ensure_future(continuations.survive(call, work))
    _RUNNING[call.pk] = task
    task.add_done_callback(lambda _: _RUNNING.pop(call.pk, None))
    return True


async def drive(call: Call, ctx: ClientContext):
    """The call from its arrival: run at once when the policy allowed it, else once an operator approves it."""
    if call.status == Call.Status.FORWARDED:
        await run(call, ctx)
        return
    call = await settled(call)
    if call.status == Call.Status.APPROVED:
        await adopt(call, ctx)


async def settled(call: Call) -> Call:
    """The call once no longer pending: decided, cancelled, or expired here at its deadline."""

    async def look() -> Call | None:
        current = await runner.reread(call.pk)
        return current if current.status != Call.Status.PENDING else None

    def expire():
        return sync_to_async(expiry.expire)(call)

    return await waiting.wait_until(events.call_group(call.pk), look, call.expires_at, expire)


async def adopt(call: Call, ctx: ClientContext):
    """Run an approved call here, if this process is the first to take it."""
    tool = call.tool
    if tool is None or tool.digest != call.tool_digest or tool.status != Tool.Status.ACTIVE:
        # runner.forward fails it: the approval does not cover the tool as it is now.
        await runner.forward(call, ignore)
        return
    claim = {"holder": lifecycle.holding_process(), "lease_expires_at": holding.lease_end()}
    if await sync_to_async(ending.mark_forwarded)(call, **claim):
        await run(call, ctx)


async def run(call: Call, ctx: ClientContext):
    """Run a forwarded call upstream from this process and record its result; its client collects it by polling.

    What the upstream server asks meanwhile goes to an operator: no request of the client's is open to carry it.
    """
    unreachable = dataclasses.replace(ctx, capabilities={}, streaming=False)
    with holding.holding(call.pk):
        forwarding = asyncio.ensure_future(
            runner.forward(call, ignore, None, input_runner.input_handler(call, unreachable, ignore))
        )
        # No request's end tells this run that its client cancelled the task: the call's row does.
        watching = asyncio.ensure_future(cancelled_meanwhile(call))
        try:
            await asyncio.wait({forwarding, watching}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for running in (forwarding, watching):
                running.cancel()
            await asyncio.wait({forwarding, watching})
        if not forwarding.cancelled():
            forwarding.result()


async def cancelled_meanwhile(call: Call):
    """Returns once the call is cancelled (tasks/cancel, a revoked token, a retired server) while it runs."""

    async def look() -> bool | None:
        status = await sync_to_async(runner.status_of, thread_sensitive=False)(call.pk)
        return True if status == Call.Status.CANCELLED else None

    deadline = timezone.now() + timedelta(seconds=settings.UPSTREAM_CALL_TIMEOUT_SECONDS + 60)
    if await waiting.wait_until(events.call_group(call.pk), look, deadline) is None:
        # Past the deadline the upstream call's own timeout has ended the run: nothing is left to watch for.
        await asyncio.Future()


async def ignore(message: dict):
    """The emitter of a call no stream carries: its client reads the task's status instead."""


async def poked(call: Call, ctx: ClientContext) -> Call:
    """The task as a poll finds it, having done what is due and undone: expire it past its deadline, or run
    it here when it was approved and nobody took it (the process that received it is gone)."""
    if call.status == Call.Status.PENDING and call.expires_at <= timezone.now():
        await sync_to_async(expiry.expire)(call)
        return await runner.reread(call.pk)
    if call.status == Call.Status.APPROVED:
        detach(call, adopt(call, ctx))
    return call


async def final(call: Call, ctx: ClientContext) -> Call:
    """The call once it ended (tasks/result waits for it); as it stands if the upstream's time ran out first."""
    if call.status == Call.Status.PENDING:
        call = await settled(call)
    call = await poked(call, ctx)
    if call.ended:
        return call

    async def look() -> Call | None:
        current = await runner.reread(call.pk)
        return current if current.ended else None

    deadline = timezone.now() + timedelta(seconds=settings.UPSTREAM_CALL_TIMEOUT_SECONDS)
    return await waiting.wait_until(events.call_group(call.pk), look, deadline) or await runner.reread(call.pk)
