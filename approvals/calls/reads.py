"""Resource reads and prompt gets governed like tool calls, once a policy rule names them.

A read or a get that some enabled rule of its kind matches becomes a Call of kind `resource` or
`prompt`: recorded, decided by the rule or held for operators (quorum, separation of duties,
expiry, bulk) with the same audit events as a call, then forwarded and answered. One no rule
matches runs at once and unrecorded as a call, as before rules could name them (the policy's
default for these kinds is allow); the gateway's own audit event records it either way.
Nothing here is edited: an operator approves or denies what was asked.
"""

import asyncio
from dataclasses import dataclass
from functools import partial

from asgiref.sync import sync_to_async
from django.db import transaction

from approvals.calls import ending, holding, lifecycle, runner
from approvals.calls.models import Call
from approvals.catalog.models import Server
from approvals.db.shared_threads import connection_given_back
from approvals.policy import engine
from approvals.policy.models import PolicyRule
from approvals.protocol.jsonrpc import INVALID_REQUEST, JsonRpcError
from approvals.tokens.context import ClientContext


@dataclass(frozen=True)
class Read:
    """One read or prompt get as its request asked for it, for the calls it may become."""

    kind: str
    server: Server | None
    name: str  # the URI, or the prompt's exposed name
    arguments: dict
    digest: str
    jsonrpc_id: object = None
    progress_token: object = None


def facts(token, read: Read) -> engine.CallFacts:
    # No server: a URI that none serves, as the policy's trial still shows it.
    server_id = read.server.pk if read.server is not None else None
    return engine.CallFacts(
        client_id=token.pk,
        server_id=server_id,
        tool_name=read.name,
        arguments=read.arguments,
        annotations=None,
        kind=read.kind,
    )


@connection_given_back
def governed_by_a_rule(token, read: Read) -> bool:
    """Whether an enabled rule decides this read."""
    return verdict_for(token, read).rule is not None


def verdict_for(token, read: Read) -> engine.Verdict:
    # The rules of other kinds are not even read.
    rows = list(PolicyRule.objects.filter(enabled=True, applies_to=read.kind))
    return engine.evaluate(lifecycle.policy_rules(rows), facts(token, read))


@connection_given_back
def refused_beside_the_read(token, reads: list[Read], what: str) -> JsonRpcError | None:
    """Why a subscription to a resource, or a completion for a resource or a prompt, is refused: a deny or ask rule
    that names the read it stands beside. Each tells something of what the read would (the resource's updates,
    the values its arguments take) and neither can wait for an operator, so a rule that holds the read refuses it.
    """
    for read in reads:
        verdict = verdict_for(token, read)
        if verdict.rule is None or verdict.action == engine.ALLOW:
            continue
        why = f": {verdict.message}" if verdict.message else ""
        if verdict.action == engine.DENY:
            text = f"{what} was denied by policy ({verdict.rule_name}){why}."
        else:
            text = f"{what} was refused: policy ({verdict.rule_name}) asks an operator about {read.name}{why}."
        return JsonRpcError(INVALID_REQUEST, text, {"status": "refused", "rule": verdict.rule_name})
    return None


@transaction.atomic
def receive_read(ctx: ClientContext, read: Read) -> tuple[Call | None, dict | None]:
    """Record the read as a call and apply the policy, as lifecycle.receive_call does for a tool call."""
    # The URI is whole in the arguments; the name column holds what fits.
    field_size = Call._meta.get_field("tool_name").max_length
    call = lifecycle.new_call(
        ctx,
        read.jsonrpc_id,
        read.progress_token,
        read.arguments,
        kind=read.kind,
        server=read.server,
        tool_name=read.name[:field_size],
        tool_digest=read.digest,
    )
    verdict = engine.evaluate(lifecycle.policy_rules(), facts(ctx.token, read))
    return lifecycle.settle(ctx, call, verdict, Call.Status.FORWARDED)


def refusal(call: Call | None, answer: dict | None) -> JsonRpcError:
    """The client's error for a read that was not let through: the rule's or the operator's words, or what ended it."""
    text = ending.error_text(call) if call is not None else answer["content"][0]["text"]
    data = {"status": call.status if call is not None else "refused"}
    if call is not None and call.reason:
        data["reason"] = call.reason
    return JsonRpcError(INVALID_REQUEST, text, data)


async def governed(ctx: ClientContext, read: Read, run, emit) -> dict:
    """The answer of `run()`, which asks the upstream, once the policy or the operators let the read through.

    Only for a read governed_by_a_rule; while it is held, `emit` carries its progress to the client.
    """
    call, answer = await runner.record_arrival(ctx, partial(receive_read, ctx, read))
    if call is None:
        raise refusal(None, answer)
    with holding.holding(call.pk):
        try:
            return await let_through(call, run, emit)
        except asyncio.CancelledError:
            await runner.cancelled(call, ctx)
            raise


async def let_through(call: Call, run, emit) -> dict:
    if call.status == Call.Status.PENDING:
        call = await runner.wait_for_decision(call, emit)
    if call.status == Call.Status.APPROVED and await sync_to_async(ending.mark_forwarded)(call):
        call.status = Call.Status.FORWARDED
    if call.status != Call.Status.FORWARDED:
        raise refusal(await runner.reread(call.pk), None)
    try:
        result = await run()
    except JsonRpcError as exc:
        await sync_to_async(ending.record_result)(call, Call.Status.FAILED, {}, exc.message)
        raise
    await sync_to_async(ending.record_result)(call, Call.Status.COMPLETED, result, "")
    return result
