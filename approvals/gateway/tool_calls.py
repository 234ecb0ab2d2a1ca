"""tools/call in either era: on an SSE stream when the client takes one, else as one JSON answer.

The life of the call belongs to approvals.calls.runner; this only carries it over HTTP. The stream
and its keep-alives are streams.answer_request's, which held reads and prompts share.
"""

import dataclasses
from collections.abc import Callable

from approvals.calls import lifecycle, permissions, runner
from approvals.catalog.models import Tool
from approvals.db.shared_threads import in_shared_thread
from approvals.gateway import streams
from approvals.gateway.http import Refused, error_response
from approvals.observe import logs
from approvals.protocol.jsonrpc import INVALID_PARAMS, INVALID_REQUEST, JsonRpcError, Request
from approvals.tokens.context import ClientContext


async def called_tool(ctx: ClientContext, params: dict) -> Tool | permissions.BuiltinTool:
    """The tool a call names, when this token may use it; refusing early spares the client an SSE stream."""
    name = params.get("name")
    tool = permissions.builtin_tool(ctx.token, name) or lifecycle.kept_tool(ctx.token, name)
    if tool is None:
        tool = await in_shared_thread(lifecycle.find_tool)(ctx.token, name, kept=True)
    if tool is None:
        raise JsonRpcError(INVALID_PARAMS, f"Unknown tool: {name}")
    return tool


async def respond_to_call(
    tool: Tool | permissions.BuiltinTool,
    ctx: ClientContext,
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
    # Past the caps of open streams, a call that needs no wait is answered all the same, as the JSON the client
    # takes too: a client running many quick calls at once is not refused for it. One that would wait is refused.
    unstreamed = streams.OPEN_STREAMS.refusal(ctx.token.pk, ctx.session_id) if stream else None
    stream = stream and unstreamed is None
    ctx = dataclasses.replace(ctx, streaming=stream, unstreamed=unstreamed or "")
    logs.bind(tool=tool.exposed_name, server=tool.server.name if isinstance(tool, Tool) else None)
    if isinstance(tool, permissions.BuiltinTool):
        run = permissions.run_prompt

    async def work(emit) -> dict:
        try:
            return await run(ctx, request.id, request.params, emit, tool=tool)
        except lifecycle.MayNotWait as exc:
            raise Refused(error_response(JsonRpcError(INVALID_REQUEST, str(exc)), 429, request.id, headers)) from None

    return await streams.answer_request(
        ctx, request, work, stream=stream, finish=finish, error_status=error_status, headers=headers
    )
