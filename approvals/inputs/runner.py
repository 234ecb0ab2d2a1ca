"""Answering what an upstream server asks during a forwarded call: an operator, or the client itself.

`input_handler(call, ctx, emit)` is the `on_request` that calls.runner.forward
hands to call_tool. The upstream client calls it for a legacy server's request
on the call's stream and for each entry of a 2026-07-28 `input_required` result
alike, and sends back what it returns. It decides who answers:

- elicitation/create: an operator, in a form built from the schema (or a URL to
  confirm), unless the server's routing is client_if_capable and the client
  declared elicitation (for URL mode, URL elicitation) and can be reached: a
  legacy client on the call's SSE stream, a 2026-07-28 client through an
  input_required answer (see continuations.py). A schema outside the spec's
  subset is refused, and answered upstream as a decline.
- sampling/createMessage: routed the same way, on the client's sampling
  capability. An operator reads the messages and writes the reply in the
  model's place, or declines. A malformed request is refused as invalid params.
- anything else: unsupported.

Each request is a row that is waited on like a pending call: a channel-layer
group wakes the wait, a periodic re-read catches a lost message, and
INPUT_TIMEOUT_SECONDS bounds it.
"""

import asyncio

from asgiref.sync import sync_to_async

from approvals.catalog.models import Server
from approvals.inputs import requests
from approvals.inputs.models import InputRequest
from approvals.inputs.requests import ELICIT, SAMPLE
from approvals.live import events, waiting
from approvals.protocol import jsonrpc, sampling
from approvals.protocol.elicitation_requests import request_problems
from approvals.protocol.jsonrpc import INVALID_PARAMS, METHOD_NOT_FOUND, JsonRpcError
from approvals.protocol.revisions import MODERN, REVISIONS
from approvals.tokens.context import ClientContext
from approvals.upstream.serving import decline

Route = InputRequest.Route


def input_handler(call, ctx: ClientContext, emit):
    # Read now, where it is already loaded: an async handler may not query lazily.
    server = call.tool.server if call.tool else None

    async def on_request(method: str, params: dict) -> dict:
        if method == ELICIT:
            return await elicit(call, server, ctx, emit, params)
        if method == SAMPLE:
            return await sample(call, server, ctx, emit, params)
        raise JsonRpcError(METHOD_NOT_FOUND, f"{method} is not supported by this gateway")

    return on_request


async def unclaimed_request(spec, method: str, params: dict) -> dict:
    """A server's request that belongs to no call of ours: nobody could answer it."""
    return await decline(method, params)


def client_can(ctx: ClientContext, method: str, params: dict) -> bool:
    """Whether the client declared the capability and can be reached with the request now."""
    reachable = ctx.era == MODERN or ctx.streaming
    if method == SAMPLE:
        return reachable and isinstance(ctx.capabilities.get("sampling"), dict)
    declared = ctx.capabilities.get("elicitation")
    if not reachable or not isinstance(declared, dict):
        return False
    # An empty elicitation capability is form mode, as it was before modes existed.
    return "url" in declared if params.get("mode") == "url" else ("form" in declared or "url" not in declared)


def routes_to_client(server: Server | None) -> bool:
    return server is not None and server.input_routing == Server.InputRouting.CLIENT_IF_CAPABLE


def relays_to_client(server: Server | None, ctx: ClientContext) -> bool:
    """Whether anything this server asks during the call may go to the client (so a 2026-07-28 call runs detached)."""
    declared = any(isinstance(ctx.capabilities.get(name), dict) for name in ("elicitation", "sampling"))
    return declared and routes_to_client(server)


def route_of(server: Server | None, ctx: ClientContext, method: str, params: dict) -> str:
    return Route.CLIENT if routes_to_client(server) and client_can(ctx, method, params) else Route.OPERATOR


async def elicit(call, server: Server | None, ctx: ClientContext, emit, params: dict) -> dict:
    problems = request_problems(params)
    if problems:
        reason = "the server asked outside what elicitation allows: " + "; ".join(problems)
        await sync_to_async(requests.record_unanswered)(call, ELICIT, params, InputRequest.Status.REFUSED, reason)
        return {"action": "decline"}
    return await ask(call, server, ctx, emit, ELICIT, params, route_of(server, ctx, ELICIT, params))


async def sample(call, server: Server | None, ctx: ClientContext, emit, params: dict) -> dict:
    problems = sampling.request_problems(params)
    if problems:
        reason = "the server's sampling request is malformed: " + "; ".join(problems)
        await sync_to_async(requests.record_unanswered)(call, SAMPLE, params, InputRequest.Status.REFUSED, reason)
        raise JsonRpcError(INVALID_PARAMS, reason)
    return await ask(call, server, ctx, emit, SAMPLE, params, route_of(server, ctx, SAMPLE, params))


async def ask(call, server: Server | None, ctx: ClientContext, emit, method: str, params: dict, route: str) -> dict:
    key = requests.mint_key(server) if route == Route.CLIENT else ""
    request = await sync_to_async(requests.open_request)(call, method, params, route, key)
    try:
        if route == Route.CLIENT and ctx.era != MODERN:
            # A legacy client answers by POSTing a response to this id; a modern one finds it in input_required.
            await emit(jsonrpc.request(key, method, for_revision(ctx, params)))
        request = await wait_for_answer(request)
    except asyncio.CancelledError:
        await asyncio.shield(
            sync_to_async(requests.end_request)(request.pk, InputRequest.Status.CANCELLED, "the call ended")
        )
        raise
    return await sync_to_async(requests.upstream_reply)(request)


def for_revision(ctx: ClientContext, params: dict) -> dict:
    """Params as the client's revision words them: before URL elicitation (2025-11-25) there was no form 'mode'."""
    revision = REVISIONS.get(ctx.protocol_version)
    if revision is not None and not revision.url_elicitation and params.get("mode") == "form":
        return {key: value for key, value in params.items() if key != "mode"}
    return params


async def reread(input_id) -> InputRequest:
    return await InputRequest.objects.select_related("call").aget(pk=input_id)


async def wait_for_answer(request: InputRequest) -> InputRequest:
    """The request once it is no longer pending: answered, cancelled with its call, or expired."""

    async def settled() -> InputRequest | None:
        current = await reread(request.pk)
        if current.status != InputRequest.Status.PENDING:
            return current
        if current.call.ended:
            await sync_to_async(requests.end_request)(request.pk, InputRequest.Status.CANCELLED, "the call ended")
            return await reread(request.pk)
        return None

    def expire():
        return sync_to_async(requests.end_request)(request.pk, InputRequest.Status.EXPIRED, requests.expired_reason())

    return await waiting.wait_until(events.input_group(request.pk), settled, request.expires_at, expire)
