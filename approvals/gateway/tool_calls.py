"""tools/call in either era: on an SSE stream when the client takes one, else as one JSON answer.

The life of the call belongs to approvals.calls.runner; this only carries it over HTTP. On a
stream the call runs as the stream's own task, so the client's closing the
stream cancels the call, as the spec says it must.
"""

import dataclasses
import logging
from collections.abc import Callable

from asgiref.sync import sync_to_async

from approvals.calls import holding, lifecycle, permissions, runner
from approvals.gateway import streams
from approvals.gateway.http import jsonrpc_response
from approvals.models import Tool
from approvals.protocol import jsonrpc
from approvals.protocol.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, JsonRpcError, Request

log = logging.getLogger(__name__)


async def called_tool(ctx: lifecycle.ClientContext, params: dict) -> Tool | permissions.BuiltinTool:
    """The tool a call names, when this token may use it; refusing early spares the client an SSE stream."""
    name = params.get("name")
    tool = permissions.builtin_tool(ctx.token, name) or await sync_to_async(
        holding.connection_given_back(lifecycle.find_tool), thread_sensitive=False
    )(ctx.token, name)
    if tool is None:
        raise JsonRpcError(INVALID_PARAMS, f"Unknown tool: {name}")
    return tool


async def respond_to_call(
    tool: Tool | permissions.BuiltinTool,
    ctx: lifecycle.ClientContext,
    request: Request,
    *,
    stream: bool,
    finish: Callable[[dict], dict],
    error_status: Callable[[int], int],
    headers: dict | None = None,
    run=runner.run_call,
):
    """The response to a tools/call; `finish` dresses the CallToolResult for the era.

    `run` answers the call: run_call for a new one, continuations.continue_call for a client's retry;
    the console's own tools answer for themselves.
    """
    ctx = dataclasses.replace(ctx, streaming=stream)
    if isinstance(tool, permissions.BuiltinTool):
        run = permissions.run_prompt

    async def respond(emit) -> dict:
        try:
            result = await run(ctx, request.id, request.params, emit, tool=tool)
        except JsonRpcError as exc:
            return jsonrpc.error(request.id, exc)
        except Exception:
            log.exception("tools/call %r failed in the console", request.params.get("name"))
            return jsonrpc.error(request.id, JsonRpcError(INTERNAL_ERROR, "Internal error"))
        return jsonrpc.result(request.id, finish(result))

    if stream:
        return streams.sse_response(streams.response_events(respond), ctx.token, ctx.session_id, headers, request.id)

    async def nowhere(message):
        # A JSON response has no room for notifications before it.
        pass

    message = await respond(nowhere)
    status = error_status(message["error"]["code"]) if "error" in message else 200
    return jsonrpc_response(message, status, headers)
