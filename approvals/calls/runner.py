"""Running one tools/call for the gateway: wait for a decision, forward, answer.

This runs in the web process that holds the client's stream. It never trusts a wake-up alone: the call's row is
re-read after every message and every few seconds, so a lost message delays a waiting call but never strands it.
"""

import asyncio
import functools
import logging
import time

from asgiref.sync import SyncToAsync, sync_to_async

from approvals.calls import batched_writes, continuations, ending, expiry, holding, lifecycle, url_elicitation
from approvals.calls.models import Call
from approvals.calls.upstream_call import call_upstream
from approvals.catalog.models import Tool
from approvals.db.shared_threads import connection_given_back, in_shared_thread
from approvals.inputs import runner as input_runner
from approvals.live import events, waiting
from approvals.observe import logs, traces
from approvals.protocol.jsonrpc import INVALID_PARAMS, JsonRpcError
from approvals.protocol.results import tool_error_result
from approvals.protocol.revisions import LOG_LEVELS, META_LOG_LEVEL, MODERN
from approvals.tokens.context import ClientContext

log = logging.getLogger(__name__)


async def run_call(ctx: ClientContext, jsonrpc_id, params: dict, emit, tool: Tool | None = None, held=None) -> dict:
    """The CallToolResult for one tools/call; `emit` sends notifications on the request's stream. `tool` is the
    tool the gateway found for this token and name, if it looked; `held(call, ctx)`, if given, answers a call held
    for a decision in place of the wait (task_runner.hold_as_task: as a task)."""
    name, arguments = params.get("name"), params.get("arguments", {})
    if arguments is None:
        arguments = {}
    if not isinstance(name, str) or not isinstance(arguments, dict):
        raise JsonRpcError(INVALID_PARAMS, "tools/call needs a string 'name' and an object 'arguments'")
    if tool is None:
        tool = await in_shared_thread(lifecycle.find_tool)(ctx.token, name)
    if tool is None:
        raise JsonRpcError(INVALID_PARAMS, f"Unknown tool: {name}")
    if tool.status != Tool.Status.ACTIVE:
        return await sync_to_async(lifecycle.refuse_unreviewed)(ctx, tool)
    meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
    progress_token = meta.get("progressToken")
    log_level = meta.get(META_LOG_LEVEL) if meta.get(META_LOG_LEVEL) in LOG_LEVELS else ctx.log_level
    with traces.span("receive", **{"mcp.tool": tool.exposed_name}):
        receive = functools.partial(lifecycle.receive_call, ctx, tool, arguments, jsonrpc_id, progress_token)
        call, result = await record_arrival(ctx, traces.carried(receive))
    logs.bind(call_id=call.pk if call is not None else None)
    if result is not None:
        return result
    with holding.holding(call.pk):
        try:
            if call.status == Call.Status.PENDING and held is not None:
                return await held(call, ctx)
            if call.status == Call.Status.PENDING:
                with traces.span("hold"):
                    call = await wait_for_decision(call, emit)
            if call.status not in Call.IN_FLIGHT:
                return tool_error_result(ending.error_text(call))
            on_request = input_runner.input_handler(call, ctx, emit)
            if ctx.era == MODERN and input_runner.relays_to_client(call.tool and call.tool.server, ctx):
                running = holding.held_while(call.pk, forward(call, emit, log_level, on_request))
                return await continuations.run_detached(call, ctx, running)
            return await forward(
                call, emit, log_level, on_request, url_elicitation_client=url_elicitation.taken_by(ctx)
            )
        except asyncio.CancelledError:
            await cancelled(call, ctx)
            raise


async def record_arrival(ctx: ClientContext, receive) -> tuple[Call | None, dict | None]:
    """Run `receive` (lifecycle.receive_call or its like) in the loop's batch: the call's row, and its answer if no
    wait follows."""
    if batched_writes.writes_queued() >= batched_writes.WRITES_AT_ONCE:
        # A burst: the write may wait a while, and thousands of requests would keep a thread each meanwhile. A call
        # written at once keeps it for the response's end; one that waits for a decision lets it go then.
        let_go_of_the_thread()
    receiving = batched_writes.write(receive)
    try:
        # Shielded: the row is written however often the request is cancelled meanwhile.
        return await asyncio.shield(receiving)
    except asyncio.CancelledError:
        # The request ends now, without waiting for a write that a second cancellation (a server's) could cut
        # again: the loop cancels the call once it is recorded.
        receiving.add_done_callback(functools.partial(cancel_once_recorded, ctx))
        raise


def cancel_once_recorded(ctx: ClientContext, receiving: asyncio.Future):
    if receiving.cancelled() or receiving.exception() is not None:
        return
    call, _ = receiving.result()
    if call is not None and call.status in Call.OPEN:
        batched_writes.cancel_for_the_client(call.pk, ctx.token)


async def cancelled(call: Call, ctx: ClientContext):
    """The client closed the stream: that is how a client cancels over HTTP."""
    await asyncio.shield(batched_writes.cancel_for_the_client(call.pk, ctx.token))


async def reread(call_id) -> Call:
    return await Call.objects.select_related("tool__server").aget(pk=call_id)


@connection_given_back
def status_of(call_id) -> str:
    return Call.objects.filter(pk=call_id).values_list("status", flat=True).get()


async def wait_for_decision(call: Call, emit) -> Call:
    """The call once decided, expired or cancelled; the process's batched re-read stands in for a timer of its own."""
    started = time.monotonic()

    async def tell_progress():
        if call.progress_token is not None:
            await emit(progress(call.progress_token, time.monotonic() - started, "waiting for operator approval"))

    async def decided() -> Call | None:
        # While it is pending, the status alone; the whole row once it changed.
        # In the loop's shared threads: the request's own thread is let go of while the call waits.
        if await sync_to_async(status_of, thread_sensitive=False)(call.pk) != Call.Status.PENDING:
            return await reread(call.pk)
        let_go_of_the_thread()
        await tell_progress()
        return None

    def expire():
        return sync_to_async(expiry.expire)(call)

    quiet = tell_progress if call.progress_token is not None else None
    with holding.waiting_for_decision(call.pk):
        return await waiting.wait_until(
            events.call_group(call.pk), decided, call.expires_at, expire, reread=False, quiet=quiet
        )


def let_go_of_the_thread():
    """Give back the request's thread: a call may wait many minutes.

    Django runs a request's synchronous work in a thread of the request's own, kept until the request ends;
    thousands of held calls would keep as many, each with its stack (and, on SQLite, a connection with its page
    cache). Without its executor, the request's next synchronous work (a decision read, the response's close)
    starts a thread afresh; its connection was given back already (connection_given_back).
    """
    context = SyncToAsync.thread_sensitive_context.get(None)
    executor = SyncToAsync.context_to_thread_executor.pop(context, None) if context is not None else None
    if executor is not None:
        # Its thread ends once idle; nothing of this request's state lives there between two calls.
        executor.shutdown(wait=False)


def progress(token, value, message):
    params = {"progressToken": token, "progress": round(value, 3), "message": message}
    return {"jsonrpc": "2.0", "method": "notifications/progress", "params": params}


async def forward(
    call: Call, emit, log_level: str | None = None, on_request=None, *, url_elicitation_client: bool = False
) -> dict:
    """Run an approved call upstream and record its result; a call the policy allowed is already marked forwarded.

    With `url_elicitation_client` (see url_elicitation.taken_by), an upstream's -32042 is raised to the client
    once the call is recorded, and its notifications/elicitation/complete are relayed.
    """
    tool = call.tool

    async def recorded(outcome: tuple) -> dict:
        *recordable, relayed = outcome
        # In the loop's batch of writes, like the arrival: one transaction for the results of the calls that
        # answered meanwhile, on the batch's connection. Shielded: the answer is recorded however the request ends.
        with traces.span("record"):
            recording = batched_writes.write(functools.partial(ending.record_result, call, *recordable))
            result = await asyncio.shield(recording)
            if relayed is not None and url_elicitation_client:
                raise relayed
            return result

    if call.status != Call.Status.APPROVED:
        return await recorded(await call_upstream(call, emit, log_level, on_request, url_elicitation_client))
    if tool is None or tool.digest != call.tool_digest or tool.status != tool.Status.ACTIVE:
        reason = "the tool's definition changed after the call was made; the approval does not cover the new definition"
        text = f"The call to {call.tool_name} was not run: {reason}."
        return await sync_to_async(ending.record_result)(call, Call.Status.FAILED, tool_error_result(text), reason)
    # The mark's transaction runs while the request travels upstream rather than before it, and the
    # result is recorded after the mark. A call cancelled in between has its upstream request cancelled.
    marking = asyncio.ensure_future(sync_to_async(ending.mark_forwarded)(call))
    calling = asyncio.ensure_future(call_upstream(call, emit, log_level, on_request, url_elicitation_client))
    try:
        if await asyncio.shield(marking):
            return await recorded(await calling)
    finally:
        if not calling.done():
            calling.cancel()
            await asyncio.wait({calling})
    call = await reread(call.pk)
    return tool_error_result(ending.error_text(call))
