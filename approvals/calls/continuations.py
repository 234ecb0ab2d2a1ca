"""A 2026-07-28 client answering what the upstream server asks during its call (passthrough routing).

2026-07-28 has no server-to-client requests: the call's answer becomes
`{resultType: "input_required", inputRequests, requestState}` and the client
retries the call, under a new JSON-RPC id, with `inputResponses` and the
`requestState` echoed.

The upstream side of the call does not end when that answer goes out. Whatever
era the upstream server speaks, the console's upstream client holds the round
trip itself: a legacy server keeps its stream open until its request is answered,
and for a modern one the upstream client echoes the server's own requestState on
its retry. So a call that may need its client's input runs upstream in a task of
the web process that received it (`run_detached`), and every request about the
call, the first and each retry, waits for the call's next outcome (`outcome`):
its final result, or the input requests now open for the client. Those are rows
in the database, and the task waits on them through the channel layer, so a
retry may arrive at any web process. The upstream server's requestState never
leaves the console, which is stronger than wrapping it: the client gets only the
console's own state, signed over the token, the call, the keys it may answer and
an expiry. The keys are namespaced by the server asking (inputs.mint_key).

The cost of this simplicity: a retry can only continue a call while the process
holding its task lives; after a restart the retry is told the call is gone.
"""

import asyncio
import logging
import time
from datetime import timedelta

from asgiref.sync import sync_to_async
from django.conf import settings
from django.utils import timezone

from approvals.audit.chain import SYSTEM
from approvals.calls import batched_writes, ending
from approvals.calls.models import Call
from approvals.inputs import requests
from approvals.live import events, waiting
from approvals.protocol.canonical import sha256_digest
from approvals.protocol.jsonrpc import INVALID_PARAMS, JsonRpcError
from approvals.protocol.request_state import StateError, read_state, sign_state
from approvals.protocol.results import tool_error_result
from approvals.tokens.context import ClientContext

log = logging.getLogger(__name__)
# Calls running upstream in this process whose requests have all been answered meanwhile.
_DETACHED: dict[int, asyncio.Task] = {}


def state_key() -> bytes:
    return settings.SECRET_KEY.encode()


async def run_detached(call: Call, ctx: ClientContext, forwarding) -> dict:
    """Start `forwarding` (the call's forward coroutine) in a task of its own, then answer its first outcome."""
    task = asyncio.ensure_future(survive(call, forwarding))
    _DETACHED[call.pk] = task
    task.add_done_callback(lambda _: _DETACHED.pop(call.pk, None))
    return await outcome(call, ctx)


async def survive(call: Call, forwarding):
    """The forward, with a failure recorded on the call instead of lost in a task nobody awaits."""
    try:
        await forwarding
    except Exception:
        log.exception("call %s failed in the console while running detached", call.pk)
        await sync_to_async(ending.cancel_running)(call.pk, "the console failed while running the call", SYSTEM)


async def continue_call(ctx: ClientContext, jsonrpc_id, params: dict, emit, tool=None) -> dict:
    """A client's retry: check the state it echoes, take its answers, then answer the call's next outcome."""
    try:
        state = read_state(params.get("requestState"), state_key(), now=time.time())
    except StateError as exc:
        raise JsonRpcError(INVALID_PARAMS, f"Invalid requestState: {exc}") from None
    call = await Call.objects.select_related("tool__server", "server").filter(pk=state.get("call")).afirst()
    if call is None or state.get("token") != ctx.token.pk:
        raise JsonRpcError(INVALID_PARAMS, "Invalid requestState: it belongs to another client or call")
    arguments = params.get("arguments") or {}
    if (
        params.get("name") != call.tool_name
        or not isinstance(arguments, dict)
        or sha256_digest(arguments) != call.arguments_digest
    ):
        raise JsonRpcError(INVALID_PARAMS, "Invalid retry: repeat the call's name and arguments with its requestState")
    responses = params.get("inputResponses") or {}
    if not isinstance(responses, dict):
        raise JsonRpcError(INVALID_PARAMS, "inputResponses must be an object")
    for key in state.get("keys", []):
        if isinstance(responses.get(key), dict):
            await sync_to_async(requests.take_client_answer)(call.input_requests.filter(client_key=key), responses[key])
    try:
        return await outcome(call, ctx)
    except asyncio.CancelledError:
        await asyncio.shield(batched_writes.cancel_for_the_client(call.pk, ctx.token))
        raise


async def outcome(call: Call, ctx: ClientContext) -> dict:
    """The call's final result, or input_required for what it now waits for the client to answer."""

    async def next_outcome() -> dict | None:
        current = await Call.objects.aget(pk=call.pk)
        if current.status in Call.FINAL:
            return current.result or tool_error_result(ending.error_text(current))
        waiting = await sync_to_async(requests.open_for_client)(call.pk)
        return input_required(current, ctx, waiting) if waiting else None

    deadline = timezone.now() + timedelta(seconds=settings.UPSTREAM_CALL_TIMEOUT_SECONDS)
    try:
        found = await waiting.wait_until(events.call_group(call.pk), next_outcome, deadline)
    except asyncio.CancelledError:
        task = _DETACHED.get(call.pk)
        if task is not None:
            task.cancel()
        raise
    if found is None:
        return tool_error_result(
            f"The call to {call.tool_name} is no longer running in the console; call the tool again."
        )
    return found


def input_required(call: Call, ctx: ClientContext, waiting) -> dict:
    keys = [request.client_key for request in waiting]
    state = sign_state(
        {"call": call.pk, "token": ctx.token.pk, "keys": keys},
        state_key(),
        now=time.time(),
        lifetime=settings.INPUT_TIMEOUT_SECONDS,
    )
    return {
        "resultType": "input_required",
        "inputRequests": {
            request.client_key: {"method": request.method, "params": request.params} for request in waiting
        },
        "requestState": state,
    }
