"""Calls as MCP tasks over HTTP, in each era's words; the tasks themselves are approvals.calls.tasks'.

2025-11-25: a tools/call with `params.task` answers CreateTaskResult; tasks/get, tasks/result,
tasks/list and tasks/cancel follow it. 2026-07-28 (the `io.modelcontextprotocol/tasks`
extension, for a client that declares it): a call held for an operator answers
`resultType: "task"`; tasks/get carries the result once the task ended, and tasks/cancel.
"""

from asgiref.sync import sync_to_async

from approvals.calls import task_runner, tasks
from approvals.catalog.models import Tool
from approvals.db.shared_threads import in_shared_thread
from approvals.protocol.jsonrpc import INVALID_PARAMS, MISSING_REQUIRED_CLIENT_CAPABILITY, JsonRpcError, Request
from approvals.protocol.results import tool_error_result
from approvals.tokens.context import ClientContext

EXTENSION = "io.modelcontextprotocol/tasks"
# What a legacy client is told the console serves (initialize's capabilities).
LEGACY_CAPABILITY = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}


def wants_task(params: dict) -> bool:
    """Whether a legacy tools/call asks to run as a task."""
    return isinstance(params.get("task"), dict)


def declared_extension(ctx: ClientContext) -> bool:
    """Whether a 2026-07-28 client declared the tasks extension, so that a held call may answer as a task."""
    extensions = ctx.capabilities.get("extensions")
    return isinstance(extensions, dict) and isinstance(extensions.get(EXTENSION), dict)


async def call_as_task(ctx: ClientContext, request: Request, tool: Tool) -> dict:
    """A legacy task-augmented tools/call: CreateTaskResult, or the refusal of a call that never became one."""
    call, answer = await task_runner.start(ctx, request.id, request.params, tool, request.params["task"].get("ttl"))
    return answer if call is None else {"task": tasks.task_fields(call)}


async def task_named(ctx: ClientContext, params: dict):
    task = await in_shared_thread(tasks.find_task)(ctx.token, params.get("taskId"))
    if task is None:
        # The same for a task of another token's as for none at all.
        raise JsonRpcError(INVALID_PARAMS, f"Unknown task: {params.get('taskId')}")
    return task


async def get(ctx: ClientContext, params: dict, fields=tasks.task_fields) -> dict:
    return fields(await task_runner.poked(await task_named(ctx, params), ctx))


async def result(ctx: ClientContext, params: dict) -> dict:
    """tasks/result: waits for the task to end, then answers what the call would have."""
    call = await task_runner.final(await task_named(ctx, params), ctx)
    if not call.ended:
        return tool_error_result(f"The task {call.task_id} is still running upstream; ask for its result again.")
    answer = tasks.result_of(call)
    meta = answer.get("_meta") if isinstance(answer.get("_meta"), dict) else {}
    return {**answer, "_meta": {**meta, tasks.RELATED_TASK: {"taskId": call.task_id}}}


async def cancel(ctx: ClientContext, params: dict, fields=tasks.task_fields) -> dict:
    call = await task_named(ctx, params)
    if call.ended:
        raise JsonRpcError(INVALID_PARAMS, f"Cannot cancel task {call.task_id}: it is already {tasks.status_of(call)}")
    return fields(await sync_to_async(tasks.cancel)(call, ctx.token))


async def listed(ctx: ClientContext, params: dict) -> dict:
    cursor = params.get("cursor")
    if cursor is not None and not isinstance(cursor, str):
        raise JsonRpcError(INVALID_PARAMS, "Invalid cursor: it must be a string from a previous tasks/list")
    page, after = await sync_to_async(tasks.list_tasks)(ctx.token, cursor)
    answer = {"tasks": [tasks.task_fields(call) for call in page]}
    if after is not None:
        answer["nextCursor"] = after
    return answer


def require_extension(ctx: ClientContext):
    if not declared_extension(ctx):
        raise JsonRpcError(
            MISSING_REQUIRED_CLIENT_CAPABILITY, f"Declare the {EXTENSION} extension in clientCapabilities to use tasks"
        )


async def modern_get(ctx: ClientContext, params: dict) -> dict:
    require_extension(ctx)
    return await get(ctx, params, tasks.modern_task_fields)


async def modern_cancel(ctx: ClientContext, params: dict) -> dict:
    require_extension(ctx)
    return await cancel(ctx, params, tasks.modern_task_fields)


async def modern_update(ctx: ClientContext, params: dict) -> dict:
    """tasks/update carries a client's input to a task; the console asks its operators instead, never the client."""
    require_extension(ctx)
    call = await task_named(ctx, params)
    raise JsonRpcError(INVALID_PARAMS, f"Task {call.task_id} is {tasks.status_of(call)}: it waits for no input")


# The legacy era's task methods answered at once; tasks/result may wait, like a call.
LEGACY_METHODS = {"tasks/get": get, "tasks/list": listed, "tasks/cancel": cancel}
MODERN_METHODS = {"tasks/get": modern_get, "tasks/update": modern_update, "tasks/cancel": modern_cancel}
