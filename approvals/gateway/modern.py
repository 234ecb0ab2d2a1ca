"""The 2026-07-28 era: every POST stands alone with its own envelope; no session, no GET stream."""

import functools

from asgiref.sync import sync_to_async

from approvals.calls import continuations, runner, task_runner
from approvals.catalog import routes
from approvals.catalog.models import Tool
from approvals.gateway import http, listing, mirrored, resources_prompts, streams, subscriptions
from approvals.gateway import tasks as task_methods
from approvals.gateway.server_info import INSTRUCTIONS, capabilities, server_info
from approvals.gateway.tool_calls import called_tool, respond_to_call
from approvals.protocol import jsonrpc
from approvals.protocol.jsonrpc import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    PARSE_ERROR,
    UNSUPPORTED_PROTOCOL_VERSION,
    JsonRpcError,
    Notification,
    Request,
    Response,
)
from approvals.protocol.revisions import META_SERVER_INFO, MODERN, SUPPORTED
from approvals.tokens.context import ClientContext
from approvals.tokens.models import ClientToken

# The HTTP status of each error code, as the transport spec and the official SDK give them; others go out as 200.
ERROR_STATUS = {
    PARSE_ERROR: 400,
    INVALID_REQUEST: 400,
    INVALID_PARAMS: 400,
    HEADER_MISMATCH: 400,
    MISSING_REQUIRED_CLIENT_CAPABILITY: 400,
    UNSUPPORTED_PROTOCOL_VERSION: 400,
    METHOD_NOT_FOUND: 404,
}
# What the console speaks changes only with a new release.
DISCOVER_TTL_MS = 60 * 60 * 1000
# The catalog changes rarely, and a listen stream announces each change of tools.
LIST_TTL_MS = 60 * 1000


def error_status(code: int) -> int:
    return ERROR_STATUS.get(code, 200)


async def handle_post(request, token: ClientToken, message):
    if isinstance(message, Notification):
        return acknowledge(request)
    if isinstance(message, Response):
        raise http.Refused(http.rejection(400, "Invalid request: clients send no responses in this protocol revision"))
    try:
        version, capabilities = mirrored.check_envelope(message, request.headers)
        handler = HANDLERS.get(message.method)
        if handler is None:
            raise JsonRpcError(METHOD_NOT_FOUND, f"Method not found: {message.method}")
        return await handler(request, ClientContext(token, MODERN, version, capabilities=capabilities), message)
    except JsonRpcError as exc:
        return http.error_response(exc, error_status(exc.code), message.id)


def acknowledge(request):
    """Notifications change nothing in this era (a client cancels by closing the stream), but are accepted."""
    version = request.headers.get(http.VERSION_HEADER)
    if version is not None and version not in SUPPORTED:
        error = JsonRpcError(
            UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version", {"supported": SUPPORTED, "requested": version}
        )
        raise http.Refused(http.error_response(error, 400))
    return http.accepted()


def complete(result: dict) -> dict:
    """A result as this era wants it: typed, and signed with the console's identity in place of any upstream's."""
    meta = result.get("_meta") if isinstance(result.get("_meta"), dict) else {}
    return {
        **result,
        "resultType": result.get("resultType", "complete"),
        "_meta": {**meta, META_SERVER_INFO: server_info()},
    }


def respond_with(request_id, result: dict):
    return http.jsonrpc_response(jsonrpc.result(request_id, complete(result)))


async def discover(request, ctx: ClientContext, message: Request):
    return respond_with(
        message.id,
        {
            "supportedVersions": SUPPORTED,
            "capabilities": {
                **capabilities(await sync_to_async(routes.offered_kinds)()),
                "extensions": {task_methods.EXTENSION: {}},
            },
            "instructions": INSTRUCTIONS,
            "ttlMs": DISCOVER_TTL_MS,
            "cacheScope": "public",
        },
    )


async def list_tools(request, ctx: ClientContext, message: Request):
    page = await sync_to_async(listing.tools_page)(ctx.token, message.params, MODERN)
    return respond_with(message.id, listed(page))


def listed(page: dict) -> dict:
    # Private: a list depends on the token, so no cache may serve it to another.
    return {**page, "ttlMs": LIST_TTL_MS, "cacheScope": "private"}


async def serve_surface(request, ctx: ClientContext, message: Request):
    result = await resources_prompts.answer(ctx, message.method, message.params)
    return respond_with(message.id, listed(result) if message.method in listing.LISTINGS else result)


async def read(request, ctx: ClientContext, message: Request):
    return await resources_prompts.respond_to_read(
        ctx, message, stream=http.accepts(request)[1], finish=complete, error_status=error_status
    )


async def call_tool(request, ctx: ClientContext, message: Request):
    tool = await called_tool(ctx, message.params)
    if tool.status == Tool.Status.ACTIVE:
        # An unreviewed definition must not shape the answer: the call is refused without reading it.
        mirrored.check_param_headers(tool.definition, message.params.get("arguments"), request.headers)
    # A retry carrying answers to the input the call asked for continues that call rather than starting one.
    retry = "requestState" in message.params or "inputResponses" in message.params
    run = continuations.continue_call if retry else runner.run_call
    if not retry and task_methods.declared_extension(ctx):
        # A client that takes tasks gets one for a call held for an operator, rather than a request held open.
        run = functools.partial(runner.run_call, held=task_runner.hold_as_task)
    return await respond_to_call(
        tool, ctx, message, stream=http.accepts(request)[1], finish=complete, error_status=error_status, run=run
    )


async def listen(request, ctx: ClientContext, message: Request):
    """subscriptions/listen: an SSE answer that stays open and carries the change notifications asked for."""
    http.require_event_stream(request)
    events = await subscriptions.listen_stream(ctx, message.id, message.params.get("notifications"))
    return streams.sse_response(events, ctx.token, msg_id=message.id)


async def task_method(request, ctx: ClientContext, message: Request):
    return respond_with(message.id, await task_methods.MODERN_METHODS[message.method](ctx, message.params))


HANDLERS = {
    **dict.fromkeys(task_methods.MODERN_METHODS, task_method),
    "server/discover": discover,
    "tools/list": list_tools,
    "tools/call": call_tool,
    "subscriptions/listen": listen,
    **dict.fromkeys(resources_prompts.METHODS, serve_surface),
    **dict.fromkeys(resources_prompts.GOVERNED, read),
}
