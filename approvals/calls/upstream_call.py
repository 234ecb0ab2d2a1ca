"""One call sent to its upstream server: its progress, logs and task status relayed, its answer checked.

What comes back is what ending.record_result takes; calls.runner records it and answers the client.
"""

import asyncio
import functools
import time

from asgiref.sync import sync_to_async
from django.conf import settings

from approvals.calls import ending, tasks, url_elicitation
from approvals.calls.models import Call
from approvals.calls.upstream_sessions import session_pool, spec_for
from approvals.live import events
from approvals.observe import metrics, traces
from approvals.protocol.results import check_call_result, tool_error_result
from approvals.protocol.revisions import LOG_LEVELS
from approvals.protocol.schemas import QUICK_SECONDS, NotQuick
from approvals.upstream import UpstreamError

# How often operators' pages are told of one call's progress, at most: a server may report it thousands of times.
PROGRESS_INTERVAL_SECONDS = 0.25


class Throttle:
    """Due at first, then again once `interval` seconds have passed since it last was."""

    def __init__(self, interval: float):
        self.interval, self.last = interval, None

    def due(self) -> bool:
        now = time.monotonic()
        if self.last is not None and now - self.last < self.interval:
            return False
        self.last = now
        return True


@traces.traced("forward")
async def call_upstream(call: Call, emit, log_level, on_request, url_elicitation_client=False) -> tuple:
    """The upstream's outcome: what ending.record_result takes (the status, the result, the error, the start),
    and the error to pass on as it is to a client that can act on it (see url_elicitation), if any."""
    tool = call.tool
    # Asked for whether or not the client wants it: the call's page shows the upstream's progress too.
    upstream_token = f"call-{call.pk}"
    shown_progress = Throttle(PROGRESS_INTERVAL_SECONDS)

    async def relay(method, params):
        if method == "notifications/progress":
            if shown_progress.due() or params.get("progress") == params.get("total"):
                await events.call_progress(call.pk, params)
            if call.progress_token is not None:
                await emit(
                    {"jsonrpc": "2.0", "method": method, "params": {**params, "progressToken": call.progress_token}}
                )
        elif method == "notifications/tasks/status":
            await events.call_progress(call.pk, {"message": tasks.upstream_status(params)})
            await sync_to_async(tasks.note_upstream_task, thread_sensitive=False)(call.pk, params)
        elif method == "notifications/message" and severe_enough(params.get("level"), log_level):
            await emit({"jsonrpc": "2.0", "method": method, "params": params})
        elif method == "notifications/elicitation/complete" and url_elicitation_client:
            # The URL elicitation it completes went to the client as it was, its elicitationId with it.
            await emit({"jsonrpc": "2.0", "method": method, "params": params})

    started = time.monotonic()
    try:
        session = await session_pool().get(await spec_for(tool.server, call.token_id))
        async with asyncio.timeout(settings.UPSTREAM_CALL_TIMEOUT_SECONDS):
            result = await session.call_tool(
                tool.upstream_name,
                call.final_arguments,
                tool=tool.definition,
                progress_token=upstream_token,
                on_notification=relay,
                on_request=on_request,
                log_level=log_level,
                task_ttl_ms=settings.UPSTREAM_CALL_TIMEOUT_SECONDS * 1000,
            )
    except (TimeoutError, UpstreamError) as exc:
        metrics.upstream_answered(tool.server.name, time.monotonic() - started, exc)
        message = exc.message if isinstance(exc, UpstreamError) else "no answer in time"
        if isinstance(exc, UpstreamError) and (needed := url_elicitation.required(exc)):
            text = url_elicitation.tool_error_text(tool.server.name, call.tool_name, needed)
            return Call.Status.FAILED, tool_error_result(text), message, started, url_elicitation.error(exc, needed)
        text = ending.upstream_failure_text(tool.server.name, call.tool_name, exc, message)
        return Call.Status.FAILED, tool_error_result(text), message, started, None
    schema = tool.definition.get("outputSchema")
    # The tool's digest is of its whole definition: it stands for the schema in it.
    known = (tool.digest, "outputSchema")
    checking = functools.partial(check_call_result, result, schema, max_bytes=settings.MAX_RESULT_BYTES, known=known)
    try:  # The loop holds every stream: a schema check needing more than a quick budget goes to a thread, then always.
        check = checking(quick=QUICK_SECONDS)
    except NotQuick:
        check = await sync_to_async(checking, thread_sensitive=False)()
    metrics.upstream_answered(tool.server.name, time.monotonic() - started, "malformed" if check.errors else None)
    if check.errors:
        problem = "; ".join(check.errors)
        text = f"The upstream server {tool.server.name} returned a malformed result for {call.tool_name}: {problem}"
        return Call.Status.FAILED, tool_error_result(text), problem, started, None
    return Call.Status.COMPLETED, without_envelope(result), "", started, None


def without_envelope(result: dict) -> dict:
    """The upstream's result less its protocol envelope: the gateway answers in the client's era and its own name."""
    clean = {k: v for k, v in result.items() if k != "resultType"}
    meta = {k: v for k, v in (result.get("_meta") or {}).items() if not k.startswith("io.modelcontextprotocol/")}
    if meta:
        clean["_meta"] = meta
    else:
        clean.pop("_meta", None)
    return clean


def severe_enough(level, threshold) -> bool:
    if threshold is None or level not in LOG_LEVELS:
        return True
    return LOG_LEVELS.index(level) >= LOG_LEVELS.index(threshold)
