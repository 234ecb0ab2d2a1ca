"""How a call ends short of a decision, or once it ran: expired, cancelled, abandoned, failed, forwarded, answered.

Each end is a conditional move (db.transitions) with its audit events and its live event,
so that of an end racing with a decision only one wins. When a held call expires is calls.expiry's.
"""

import time

from django.db import transaction
from django.utils import timezone

from approvals.audit.chain import SYSTEM, Actor
from approvals.audit.values import value_fields
from approvals.calls.models import Call
from approvals.db import transitions
from approvals.inputs import requests
from approvals.tokens.models import ClientToken
from approvals.upstream import AuthorizationRequired


def end_pending(call_id, status, reason: str, actor: Actor = SYSTEM) -> bool:
    """Expire or cancel a call that is still pending; False when a decision got there first."""
    return end_call(call_id, [Call.Status.PENDING], status, reason, actor)


def cancel_running(call_id, reason: str, actor: Actor) -> bool:
    """Cancel a call wherever it is short of its answer, and what it still waits for with it."""
    with transaction.atomic():
        won = end_call(call_id, Call.OPEN, Call.Status.CANCELLED, reason, actor)
        if won:
            requests.end_open_requests(call_id, reason, actor)
    return won


def cancel_unforwarded(calls, reason: str, actor: Actor) -> int:
    """Cancel those of `calls` that no upstream request carries yet, so that no later approval of them can run.

    A call already forwarded ends as its upstream answers, and its client gets that
    answer; what it still waits for (input requests) is cancelled, so nobody answers it.
    """
    cancelled = 0
    for pk, status in list(calls.filter(status__in=Call.OPEN).values_list("pk", "status")):
        if status == Call.Status.FORWARDED:
            requests.end_open_requests(pk, reason, actor)
        else:
            cancelled += end_call(pk, [Call.Status.PENDING, Call.Status.APPROVED], Call.Status.CANCELLED, reason, actor)
    return cancelled


def end_call(call_id, sources, status, reason: str, actor: Actor) -> bool:
    changes = {"status": status, "reason": reason, "answered_at": timezone.now(), "is_error": True}
    audit = {f"call.{status}": {"reason": reason}}
    won, _ = transitions.move(Call, call_id, sources, changes, actor=actor, audit=audit, event=f"call.{status}")
    return won


def cancel_by_request(token: ClientToken, session_id: str, jsonrpc_id, reason: str) -> bool:
    """notifications/cancelled: the client names its own request id within its session."""
    ids = Call.objects.filter(token=token, session_id=session_id, status__in=Call.OPEN).values_list("pk", "jsonrpc_id")
    # JSON ids compare by value and type: the request id 1 is not the request id "1".
    matching = [pk for pk, rid in ids if rid == jsonrpc_id and type(rid) is type(jsonrpc_id)]
    return any(cancel_running(pk, reason or "cancelled by the client", Actor.client(token)) for pk in matching)


ABANDONED = "abandoned: the client's connection closed"
PROCESS_STOPPED = "the console process that held the call stopped before it was answered"
NEVER_FORWARDED = "approved, but the console process that held the call stopped before forwarding it; it was not run"
STOPPED_UPSTREAM = (
    "the console process that forwarded the call stopped before the upstream server answered; it may have run"
)


def end_abandoned_calls() -> int:
    """End the open calls whose holding process stopped renewing their lease: it died, and the client's stream with it.

    A pending call is cancelled as abandoned, so no operator is offered it any more; an
    approved one fails unrun; a forwarded one fails, its outcome unknown. Each move is
    conditional, so a decision racing with it either wins (and the next pass ends the
    approved call) or loses.
    """
    lapsed = Call.objects.filter(status__in=Call.OPEN, lease_expires_at__lt=timezone.now()).values_list("pk", flat=True)
    return sum(end_abandoned(pk) for pk in list(lapsed))


def end_abandoned(call_id) -> bool:
    return (
        end_pending(call_id, Call.Status.CANCELLED, ABANDONED)
        or fail_unanswered(call_id, [Call.Status.APPROVED], NEVER_FORWARDED)
        or fail_unanswered(call_id, [Call.Status.FORWARDED], STOPPED_UPSTREAM)
    )


@transaction.atomic
def fail_unanswered(call_id, sources, reason: str) -> bool:
    """Fail a call that nothing will answer any more, and what it still waits for with it."""
    changes = {"status": Call.Status.FAILED, "error": reason, "is_error": True, "answered_at": timezone.now()}
    audit = {"call.failed": {"error": reason}}
    won, _ = transitions.move(Call, call_id, sources, changes, actor=SYSTEM, audit=audit, event="call.finished")
    if won:
        requests.end_open_requests(call_id, reason, SYSTEM)
    return won


def mark_forwarded(call: Call, **claim) -> bool:
    """An approved call goes upstream; False when it was cancelled first, or another process took it.

    `claim` (holder, lease_expires_at) names the process that runs it, when it is not the one holding it.
    """
    changes = {"status": Call.Status.FORWARDED, "forwarded_at": timezone.now(), **claim}
    audit = {"call.forwarded": value_fields("arguments", call.final_arguments)}
    won, _ = transitions.move(
        Call, call.pk, [Call.Status.APPROVED], changes, actor=SYSTEM, audit=audit, event="call.forwarded", known=call
    )
    return won


def record_result(call: Call, status, result: dict, error: str, started=None) -> dict:
    """Store the call's result unless it ended otherwise meanwhile (a cancellation)."""
    is_error = bool(error) or bool(result.get("isError"))
    changes = {"status": status, "result": result, "error": error, "is_error": is_error, "answered_at": timezone.now()}
    data = {"result": summarize(result), "error": error}
    if started is not None:
        data["latency_ms"] = round((time.monotonic() - started) * 1000, 1)
    action = "call.completed" if status == Call.Status.COMPLETED else "call.failed"
    transitions.move(
        Call, call.pk, Call.IN_FLIGHT, changes, actor=SYSTEM, audit={action: data}, event="call.finished", known=call
    )
    return result


def summarize(result: dict) -> dict:
    """What the audit log keeps of a result, which the call's row holds whole."""
    content = result.get("content") if isinstance(result.get("content"), list) else []
    return {
        "isError": bool(result.get("isError")),
        "content_types": [block.get("type") for block in content if isinstance(block, dict)],
        "structured": "structuredContent" in result,
        **value_fields("result", result),
    }


# How the client's answer names what it asked for, per kind of call.
SUBJECTS = {Call.Kind.RESOURCE: "The read of {}", Call.Kind.PROMPT: "The prompt {}"}


def subject(call: Call) -> str:
    return SUBJECTS.get(call.kind, "The call to {}").format(call.tool_name)


def error_text(call: Call) -> str:
    what = subject(call)
    if call.status == Call.Status.DENIED:
        who = f"policy ({call.rule_name})" if call.decided_by_name == "policy" else f"operator {call.decided_by_name}"
        why = f": {call.reason}" if call.reason else ""
        return f"{what} was denied by {who}{why}. It was not run; do not retry it unchanged."
    if call.status == Call.Status.EXPIRED:
        return f"{what} was not run: {call.reason}. You may ask the user and try again later."
    if call.status == Call.Status.CANCELLED:
        return f"{what} was cancelled: {call.reason}."
    return f"{what} ended as {call.status}: {call.error or call.reason}"


def upstream_failure_text(server_name: str, tool_name: str, exc: Exception, message: str) -> str:
    """The tool error a caller reads when the upstream did not run its call; one that needs authorization says
    who must Connect, and where, in its own words."""
    if isinstance(exc, AuthorizationRequired):
        return f"{tool_name} was not run: {message}"
    retry = " It may succeed if retried." if getattr(exc, "retryable", True) else ""
    return f"The upstream server {server_name} failed to run {tool_name}: {message}.{retry}"
