"""The life of a call up to its decision: receive it, then let policy settle it or hold it.

The synchronous functions change one call's row, write its audit events in the
same transaction and announce the change after commit. calls.runner strings them
together for the gateway, inside the web process that holds the client's stream;
calls.deciding has an operator's decision on a held call, calls.ending how a call ends.
"""

import functools
import hashlib
import os
import socket
import uuid
from datetime import timedelta
from functools import lru_cache

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from approvals.audit import chain
from approvals.audit.chain import SYSTEM, Actor
from approvals.audit.values import value_fields
from approvals.calls import expiry
from approvals.calls.ending import error_text, subject, summarize
from approvals.calls.hold_terms import escalation_time, hold_terms
from approvals.calls.models import Call
from approvals.calls.observed import observed
from approvals.calls.waiting import why_no_more_pending
from approvals.catalog.models import Tool
from approvals.db import batch_reads, statements
from approvals.db import kept as db_kept
from approvals.live import events
from approvals.observe import metrics, traces
from approvals.policy import engine, rules
from approvals.policy.models import PolicyRule
from approvals.protocol.canonical import canonical_json, sha256_digest
from approvals.protocol.results import tool_error_result
from approvals.protocol.schemas import validate
from approvals.protocol.tools import annotations
from approvals.tokens.context import ClientContext
from approvals.tokens.credentials import token_allows
from approvals.tokens.models import ClientToken


class MayNotWait(Exception):
    """A call that would wait for a decision on a request that has no stream to wait on (ClientContext.unstreamed).

    Raised within the call's transaction, so that nothing of it is recorded."""


def holding_process() -> str:
    """This process, as a call's holder; read at each call so that a forked child names itself."""
    return f"{socket.gethostname()}:{os.getpid()}"[:100]


@lru_cache(maxsize=4096)
def binding_digest(arguments_digest: str, tool_digest: str) -> str:
    """What an operator's approval is bound to: these arguments to this tool definition."""
    return sha256_digest({"arguments": arguments_digest, "tool": tool_digest})


def call_binding(call: Call) -> str:
    """The binding of the arguments the call would run with now: an operator's edit changes it."""
    edited = call.edited_arguments
    return binding_digest(call.arguments_digest if edited is None else sha256_digest(edited), call.tool_digest)


def find_tool(token: ClientToken, name, kept: bool = False) -> Tool | None:
    """The tool of this name the token may use, active or awaiting review (a call to that one is refused).

    With `kept`, as db.kept keeps it, for a caller that has just refreshed the stamp.
    """
    if not isinstance(name, str) or not token_allows(token, name):
        return None
    return db_kept.load("tool", name, functools.partial(tool_named, name), kept=kept)


def kept_tool(token: ClientToken, name) -> Tool | None:
    """find_tool's answer without a query, when db.kept has it."""
    return db_kept.peek("tool", name) if isinstance(name, str) and token_allows(token, name) else None


def tool_named(name: str) -> Tool | None:
    return (
        Tool.objects.select_related("server")
        .filter(exposed_name=name, status__in=Tool.HELD, server__enabled=True)
        .first()
    )


def record_refusal(ctx: ClientContext, server, tool: Tool | None, name: str, **data):
    """A call refused before it became a row: its one audit event."""
    metrics.call_ended(server.name if server else "", "refused")
    chain.record(
        "call.refused", Actor.client(ctx.token), server=server, tool=tool, token=ctx.token, data={"tool": name, **data}
    )


@transaction.atomic
def refuse_unreviewed(ctx: ClientContext, tool: Tool) -> dict:
    """A call to a tool whose definition no admin accepted: nothing runs, and the client is told why."""
    record_refusal(ctx, tool.server, tool, tool.exposed_name, status=tool.status, digest=tool.digest)
    if tool.status == Tool.Status.DECLINED:
        return tool_error_result(
            f"The tool {tool.exposed_name} is unavailable: an admin rejected its current definition. It was not run."
        )
    return tool_error_result(
        f"The tool {tool.exposed_name} awaits review: its definition is new or changed and no admin has accepted it "
        "yet. It was not run; try again later or use another tool."
    )


def enabled_rules() -> list[PolicyRule]:
    return batch_reads.once_kept("enabled rules", lambda: list(PolicyRule.objects.filter(enabled=True)))


def policy_rules(rows: list[PolicyRule] | None = None):
    return [rules.engine_rule(r) for r in (enabled_rules() if rows is None else rows)]


def new_call(
    ctx: ClientContext, jsonrpc_id, progress_token, arguments: dict, encoded: bytes | None = None, **fields
) -> Call:
    """A call's row as it arrives, before any check or rule: what it is, from whom, held by this process (`encoded`:
    the arguments' canonical JSON, when the caller has it)."""
    now = timezone.now()
    return Call(
        token=ctx.token,
        request_id=str(uuid.uuid4()),
        era=ctx.era,
        protocol_version=ctx.protocol_version,
        session_id=ctx.session_id,
        jsonrpc_id=jsonrpc_id,
        progress_token=progress_token,
        arguments=arguments,
        arguments_digest=hashlib.sha256(canonical_json(arguments) if encoded is None else encoded).hexdigest(),
        received_at=now,
        holder=holding_process(),
        lease_expires_at=now + timedelta(seconds=settings.CALL_LEASE_SECONDS),
        **fields,
    )


@transaction.atomic
def receive_call(
    ctx: ClientContext, tool: Tool, arguments: dict, jsonrpc_id, progress_token, task: dict | None = None
) -> tuple[Call | None, dict | None]:
    """Record the call, check its arguments and apply the policy; the result when no wait follows.

    `task` ({task_id, task_ttl_ms}) makes it an MCP task (calls.tasks). A call that would wait for a decision
    while its token is at its cap of pending calls is refused unrecorded.
    """
    # Encoded once for the digest, the size check and the audit events.
    encoded = canonical_json(arguments)
    call = new_call(
        ctx,
        jsonrpc_id,
        progress_token,
        arguments,
        encoded,
        tool=tool,
        server=tool.server,
        tool_name=tool.exposed_name,
        tool_digest=tool.digest,
        **(task or {}),
    )
    # The tool's digest is of its whole definition: it stands for the schema in it.
    errors = validate(
        tool.definition.get("inputSchema") or {}, arguments, known=(tool.digest, "inputSchema"), encoded=encoded
    )
    if errors:
        call.status, call.error, call.is_error, call.answered_at = (
            Call.Status.REJECTED,
            "; ".join(errors),
            True,
            call.received_at,
        )
        call.save(force_insert=True)
        with chain.batch():
            record_received(ctx, call, {}, value_fields("arguments", arguments, encoded))
            chain.record("call.rejected", SYSTEM, call=call, data={"errors": errors})
        observed(call, decided=False)
        return call, tool_error_result(invalid_arguments_text(tool, errors))
    with traces.span("policy"):
        verdict = engine.evaluate(policy_rules(), call_facts(ctx.token, tool, arguments))
    return settle(ctx, call, verdict, Call.Status.FORWARDED, encoded=encoded)


def settle(ctx: ClientContext, call: Call, verdict: engine.Verdict, allowed, received=None, result=None, encoded=None):
    """Apply the policy's verdict to a new call and record it: (call, answer) as receive_call gives them.

    `allowed` is the status an allowed call takes at once, in this same transaction so that nobody
    can decide it otherwise: a tool call is forwarded, a permission request is completed with `result`.
    Everything is worked out first, so the call is one insert and its events one append. `encoded` is the call's
    arguments' canonical JSON when the caller has it.
    """
    now = call.received_at
    call.policy_action, call.rule_id, call.rule_name, call.policy_at = (
        verdict.action,
        verdict.rule and verdict.rule.id,
        verdict.rule_name,
        now,
    )
    if verdict.action == engine.DENY:
        call.status, call.decided_by_name, call.decided_at, call.reason = (
            Call.Status.DENIED,
            "policy",
            now,
            verdict.message,
        )
        call.is_error, call.answered_at = True, now
    elif verdict.action == engine.ALLOW:
        call.status, call.decided_by_name, call.decided_at = allowed, "policy", now
        if allowed == Call.Status.FORWARDED:
            call.forwarded_at = now
        else:
            call.result, call.answered_at = result, now
    else:
        if ctx.unstreamed:
            raise MayNotWait(ctx.unstreamed)
        refusal = why_no_more_pending(ctx.token)
        if refusal:
            return None, refuse_pending(ctx, call, refusal)
        rows = enabled_rules()
        timeout, call.approvals_needed, call.separation_of_duties = hold_terms(verdict.rule, rows)
        if call.task_id:
            # A task's hold needs no process: its row is all there is, and any process answers its polls.
            call.holder, call.lease_expires_at = "", None
        call.status, call.expires_at = Call.Status.PENDING, expiry.deadline(call, timeout, now)
        call.escalates_at = escalation_time(verdict.rule, rows, call.expires_at)
    statements.insert(call)
    # Encoded once for both events that carry the arguments.
    arguments = value_fields("arguments", call.arguments, encoded)
    with chain.batch():
        record_received(ctx, call, received or {}, arguments)
        if call.task_id:
            record_task(call)
        chain.record("call.policy", SYSTEM, call=call, data={"action": verdict.action, "rule": verdict.rule_name})
        if call.status == Call.Status.DENIED:
            chain.record("call.denied", SYSTEM, call=call, data={"reason": verdict.message, "rule": verdict.rule_name})
            # Announced to no one, so its metrics and log line are not the announcement's (actions.announce).
            observed(call, decided=True)
            return call, tool_error_result(error_text(call))
        if call.status == Call.Status.FORWARDED:
            chain.record("call.forwarded", SYSTEM, call=call, data=arguments)
            events.changed(call, "call.forwarded", decided=True)
            return call, None
        if call.status == Call.Status.COMPLETED:
            chain.record("call.completed", SYSTEM, call=call, data={"result": summarize(result), "error": ""})
            events.changed(call, "call.finished", decided=True)
            return call, result
        chain.record("call.pending", SYSTEM, call=call, data={"expires_at": call.expires_at.isoformat()})
        events.changed(call, "call.pending")
    return call, None


def record_received(ctx: ClientContext, call: Call, extra: dict, arguments: dict | None = None):
    """call.received; `arguments` are value_fields of the call's arguments, when the caller has them already."""
    # The call's trace, for its page to name: where a collector keeps its spans.
    traced = {"trace_id": trace_id} if (trace_id := traces.current_trace_id()) else {}
    arguments = arguments if arguments is not None else value_fields("arguments", call.arguments)
    chain.record(
        "call.received",
        Actor.client(ctx.token),
        call=call,
        data={"tool": call.tool_name, **traced, **extra, **arguments},
    )


def record_task(call: Call):
    """call.task_created: the client follows the call as an MCP task (calls.tasks) by this id, for so long."""
    data = {"task_id": call.task_id, "ttl_ms": call.task_ttl_ms}
    chain.record("call.task_created", Actor.client(call.token), call=call, data=data)


def refuse_pending(ctx: ClientContext, call: Call, refusal: str) -> dict:
    """A call that would wait for a decision but may not: no row, one audit event, and the client told why."""
    record_refusal(ctx, call.server, call.tool, call.tool_name, reason=refusal)
    return tool_error_result(f"{subject(call)} was not run: {refusal}.")


def call_facts(token: ClientToken, tool: Tool, arguments: dict) -> engine.CallFacts:
    return engine.CallFacts(
        client_id=token.pk,
        server_id=tool.server_id,
        tool_name=tool.exposed_name,
        arguments=arguments,
        annotations=annotations(tool.definition) if tool.server.trusted else None,
        kind=Call.Kind.TOOL,
    )


def invalid_arguments_text(tool, errors):
    return (
        f"Invalid arguments for tool {tool.exposed_name}: " + "; ".join(errors) + ". Fix the arguments and call again."
    )
