"""The legacy era (2025-03-26 to 2025-11-25): initialize opens a session; GET streams changes; DELETE ends it."""

from asgiref.sync import sync_to_async

from approvals.calls import ending
from approvals.catalog import routes
from approvals.catalog.models import Tool
from approvals.db.shared_threads import in_shared_thread
from approvals.gateway import listing, resources_prompts, sessions, streams, subscriptions
from approvals.gateway import tasks as task_methods
from approvals.gateway.http import (
    SESSION_HEADER,
    VERSION_HEADER,
    Refused,
    accepted,
    accepts,
    error_response,
    jsonrpc_response,
    no_content,
    rejection,
    require_event_stream,
)
from approvals.gateway.server_info import INSTRUCTIONS, capabilities, server_info
from approvals.gateway.tool_calls import called_tool, respond_to_call
from approvals.inputs import requests
from approvals.protocol import jsonrpc
from approvals.protocol.jsonrpc import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    JsonRpcError,
    Notification,
    Request,
)
from approvals.protocol.revisions import LEGACY, LEGACY_VERSIONS, LOG_LEVELS, negotiate_legacy
from approvals.tokens.context import ClientContext
from approvals.tokens.models import ClientToken, McpSession

SUBSCRIPTIONS = {
    "resources/subscribe": subscriptions.subscribe_in_session,
    "resources/unsubscribe": subscriptions.unsubscribe_in_session,
}


def method_error_status(code: int) -> int:
    # This era's errors about a method travel in a 200 answer: older clients take a 404 for a lost session.
    return 200


async def handle_post(request, token: ClientToken, message):
    if isinstance(message, Request) and message.method == "initialize":
        return await initialize(token, message)
    session = await require_session(request, token)
    headers = {SESSION_HEADER: session.pk}
    if isinstance(message, Notification):
        await take_notification(token, session, message)
        return accepted(headers)
    if not isinstance(message, Request):
        # The answer to a request the console sent on a call's stream; any other is stray, and dropped.
        await sync_to_async(requests.take_legacy_response)(token, session.pk, message)
        return accepted(headers)
    ctx = ClientContext(
        token,
        LEGACY,
        session.protocol_version,
        session_id=session.pk,
        capabilities=session.client_capabilities,
        log_level=session.log_level or None,
    )
    try:
        return await respond_to_request(request, ctx, session, message, headers)
    except JsonRpcError as exc:
        return error_response(exc, method_error_status(exc.code), message.id, headers)


async def initialize(token: ClientToken, message: Request):
    params = message.params
    if not isinstance(params.get("protocolVersion"), str):
        error = JsonRpcError(INVALID_PARAMS, "initialize needs a string 'protocolVersion'")
        return error_response(error, method_error_status(error.code), message.id)
    version = negotiate_legacy(params["protocolVersion"])
    try:
        session = await sync_to_async(sessions.open_session)(
            token, version, params.get("clientInfo"), params.get("capabilities")
        )
    except sessions.TooMany as exc:
        return error_response(JsonRpcError(INVALID_REQUEST, str(exc)), 429, message.id)
    result = {
        "protocolVersion": version,
        "capabilities": {
            **capabilities(await sync_to_async(routes.offered_kinds)()),
            "tasks": task_methods.LEGACY_CAPABILITY,
        },
        "serverInfo": server_info(),
        "instructions": INSTRUCTIONS,
    }
    return jsonrpc_response(jsonrpc.result(message.id, result), headers={SESSION_HEADER: session.pk})


async def require_session(request, token: ClientToken) -> McpSession:
    session_id = request.headers.get(SESSION_HEADER)
    if not session_id:
        raise Refused(rejection(400, "Bad Request: missing session; send initialize first, then its Mcp-Session-Id"))
    session = sessions.kept_session(token, session_id)
    if session is None:
        session = await in_shared_thread(sessions.find_open_session)(token, session_id, kept=True)
    if session is None:
        raise Refused(rejection(404, "Not Found: unknown or closed session; initialize a new one"))
    version = request.headers.get(VERSION_HEADER)
    # Another revision the console speaks is no reason to refuse: the session's own still shapes the answer.
    if version is not None and version not in LEGACY_VERSIONS:
        message = (
            f"Bad Request: unsupported MCP-Protocol-Version {version}; this session speaks {session.protocol_version}"
        )
        raise Refused(rejection(400, message, headers={SESSION_HEADER: session.pk}))
    return session


async def take_notification(token: ClientToken, session: McpSession, message: Notification):
    if message.method == "notifications/initialized":
        await sync_to_async(sessions.mark_initialized)(session)
    elif message.method == "notifications/cancelled":
        request_id, reason = message.params.get("requestId"), message.params.get("reason")
        if isinstance(request_id, (str, int)) and not isinstance(request_id, bool):
            reason = reason if isinstance(reason, str) else ""
            await sync_to_async(ending.cancel_by_request)(token, session.pk, request_id, reason)


async def respond_to_request(request, ctx: ClientContext, session: McpSession, message: Request, headers: dict):
    if message.method == "ping":
        return jsonrpc_response(jsonrpc.result(message.id, {}), headers=headers)
    if message.method == "logging/setLevel":
        level = message.params.get("level")
        if level not in LOG_LEVELS:
            raise JsonRpcError(INVALID_PARAMS, f"logging/setLevel needs a 'level' among {', '.join(LOG_LEVELS)}")
        await sync_to_async(sessions.set_log_level)(session, level)
        return jsonrpc_response(jsonrpc.result(message.id, {}), headers=headers)
    if message.method == "tools/list":
        page = await sync_to_async(listing.tools_page)(ctx.token, message.params, LEGACY)
        return jsonrpc_response(jsonrpc.result(message.id, page), headers=headers)
    # A tool call and a read a rule governs may wait for operators, on a stream when the client takes one.
    waiting = {
        "stream": accepts(request)[1],
        "finish": lambda result: result,
        "error_status": method_error_status,
        "headers": headers,
    }
    if message.method == "tools/call":
        tool = await called_tool(ctx, message.params)
        if task_methods.wants_task(message.params) and isinstance(tool, Tool):
            created = await task_methods.call_as_task(ctx, message, tool)
            return jsonrpc_response(jsonrpc.result(message.id, created), headers=headers)
        return await respond_to_call(tool, ctx, message, **waiting)
    if message.method == "tasks/result":
        return await streams.answer_request(
            ctx, message, lambda emit: task_methods.result(ctx, message.params), **waiting
        )
    if message.method in task_methods.LEGACY_METHODS:
        result = await task_methods.LEGACY_METHODS[message.method](ctx, message.params)
        return jsonrpc_response(jsonrpc.result(message.id, result), headers=headers)
    if message.method in resources_prompts.GOVERNED:
        return await resources_prompts.respond_to_read(ctx, message, **waiting)
    if message.method in resources_prompts.METHODS or message.method in SUBSCRIPTIONS:
        answer = SUBSCRIPTIONS.get(message.method)
        if answer is None:
            result = await resources_prompts.answer(ctx, message.method, message.params)
        else:
            result = await answer(ctx, message.params)
        return jsonrpc_response(jsonrpc.result(message.id, result), headers=headers)
    raise JsonRpcError(METHOD_NOT_FOUND, f"Method not found: {message.method}")


async def open_stream(request, token: ClientToken):
    """GET: the session's stream of server-sent notifications: the lists' changes and its resources' updates."""
    require_event_stream(request)
    session = await require_session(request, token)
    events = subscriptions.session_stream(session.pk)
    return streams.sse_response(events, token, session.pk, {SESSION_HEADER: session.pk})


async def end_session(request, token: ClientToken):
    session = await require_session(request, token)
    await sync_to_async(sessions.close_session)(session)
    return no_content()
