"""Permission requests: a coding agent asks, through approval_prompt, whether it may use one of its own tools.

Each request is a Call of kind `permission`, so the policy, holding, quorum, separation of
duties, the audit log and the queue treat it as any call; nothing runs upstream. The rule or
the operators' approval answers *allow* with the input as approved (edited or not); a denial,
an expiry or a cancellation answers *deny* with the reason.
"""

import asyncio
from dataclasses import dataclass
from functools import partial

from asgiref.sync import sync_to_async
from django.db import transaction

from approvals.calls import ending, holding, lifecycle, runner
from approvals.calls.models import Call
from approvals.policy import engine
from approvals.protocol import permission_prompt
from approvals.protocol.results import tool_error_result
from approvals.tokens.context import ClientContext
from approvals.tokens.credentials import token_allows
from approvals.tokens.models import ClientToken


@dataclass(frozen=True)
class BuiltinTool:
    """A tool the console itself offers on /mcp, listed and scoped by token globs like an upstream tool."""

    exposed_name: str
    definition: dict
    digest: str
    status: str = "active"


APPROVAL_PROMPT = BuiltinTool(permission_prompt.NAME, permission_prompt.DEFINITION, permission_prompt.DIGEST)
BUILTIN_TOOLS = {APPROVAL_PROMPT.exposed_name: APPROVAL_PROMPT}


def builtin_tool(token: ClientToken, name) -> BuiltinTool | None:
    """The console's own tool of this name, when the token's globs allow it."""
    if not isinstance(name, str) or not token_allows(token, name):
        return None
    return BUILTIN_TOOLS.get(name)


def facts(token: ClientToken, tool_name: str, tool_input: dict) -> engine.CallFacts:
    return engine.CallFacts(
        client_id=token.pk,
        server_id=None,
        tool_name=tool_name,
        arguments=tool_input,
        annotations=None,
        kind=engine.PERMISSION,
    )


@transaction.atomic
def receive_permission(
    ctx: ClientContext, tool_name: str, tool_input: dict, tool_use_id: str, jsonrpc_id, progress_token
) -> tuple[Call | None, dict | None]:
    """Record the request and apply the policy: (call, answer), the answer None when an operator decides."""
    call = lifecycle.new_call(
        ctx, jsonrpc_id, progress_token, tool_input, kind=Call.Kind.PERMISSION, tool_name=tool_name
    )
    verdict = engine.evaluate(lifecycle.policy_rules(), facts(ctx.token, tool_name, tool_input))
    received = {"tool_use_id": tool_use_id} if tool_use_id else {}
    allowed = permission_prompt.allow(tool_input)
    call, answer = lifecycle.settle(ctx, call, verdict, Call.Status.COMPLETED, received, allowed)
    if call is None:
        # Refused before it was recorded (the token's cap of pending calls): the agent reads why.
        return None, permission_prompt.deny(answer["content"][0]["text"])
    if call.status == Call.Status.DENIED:
        return call, permission_prompt.deny(denial_message(call))
    return call, answer


def denial_message(call: Call) -> str:
    """What the agent is told when it may not go ahead: the rule's or the operator's message, else what happened."""
    if call.status == Call.Status.DENIED and call.reason:
        return call.reason
    if call.status == Call.Status.DENIED:
        return f"Denied by the console's policy ({call.rule_name}). Do not retry it unchanged."
    return ending.error_text(call)


async def run_prompt(ctx: ClientContext, jsonrpc_id, params: dict, emit, tool=None) -> dict:
    """The CallToolResult of one approval_prompt call: wait for the policy or the operators, answer allow or deny."""
    try:
        tool_name, tool_input, tool_use_id = permission_prompt.read_arguments(params.get("arguments"))
    except permission_prompt.PromptError as exc:
        return tool_error_result(f"Invalid arguments for tool {permission_prompt.NAME}: {exc}. Fix them and ask again.")
    meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
    receive = partial(
        receive_permission, ctx, tool_name, tool_input, tool_use_id, jsonrpc_id, meta.get("progressToken")
    )
    call, answer = await runner.record_arrival(ctx, receive)
    if answer is not None:
        return answer
    with holding.holding(call.pk):
        try:
            call = await runner.wait_for_decision(call, emit)
            if call.status == Call.Status.APPROVED:
                allowed = permission_prompt.allow(call.final_arguments)
                await sync_to_async(ending.record_result)(call, Call.Status.COMPLETED, allowed, "")
                call = await runner.reread(call.pk)
                if call.status == Call.Status.COMPLETED:
                    return allowed
            return permission_prompt.deny(denial_message(call))
        except asyncio.CancelledError:
            await runner.cancelled(call, ctx)
            raise
