"""A call's life as steps with the time each took, and the words pages use for its status."""

from dataclasses import dataclass
from datetime import datetime

from approvals.audit.models import AuditEvent
from approvals.calls import deciding
from approvals.calls.models import Call

POLICY_WORDS = {"allow": "allowed by policy", "ask": "held for an operator", "deny": "denied by policy"}


@dataclass
class Step:
    name: str
    at: datetime
    detail: str = ""
    after_ms: float | None = None


def decider(call: Call) -> str:
    """Who decided: the operator, or for a call that needed several approvals each who approved it."""
    if call.approvals_needed > 1 and call.status != Call.Status.DENIED:
        return " and ".join(deciding.approvers(call)) or call.decided_by_name
    return call.decided_by_name


def decided_detail(call: Call) -> str:
    if call.decided_by_name == "policy":
        return "by policy"
    verb = "denied" if call.status == Call.Status.DENIED else "approved"
    edited = " with edited arguments" if call.edited_arguments is not None else ""
    reason = f": {call.reason}" if call.reason else ""
    return f"{verb} by {decider(call)}{edited}{reason}"


def answered_detail(call: Call) -> str:
    if call.status in Call.CUT_SHORT and call.reason:
        return f"{call.get_status_display().lower()}: {call.reason}"
    return call.get_status_display().lower() + (" (an error result)" if call.is_error else "")


def call_timeline(call: Call) -> list[Step]:
    policy = POLICY_WORDS.get(call.policy_action, call.policy_action)
    candidates = [
        ("Received", call.received_at, f"from {call.token.name}"),
        ("Policy", call.policy_at, f"{policy} ({call.rule_name})" if call.rule_name else policy),
        ("Decided", call.decided_at if call.decided_by_name != "policy" else None, decided_detail(call)),
        ("Forwarded", call.forwarded_at, f"to {call.server.name}" if call.server else ""),
        ("Answered", call.answered_at, answered_detail(call)),
    ]
    steps, previous = [], None
    for name, at, detail in candidates:
        if at is None:
            continue
        after = (at - previous).total_seconds() * 1000 if previous is not None else None
        steps.append(Step(name, at, detail, after))
        previous = at
    return steps


def outcome_text(call: Call) -> str:
    """One line for a call that is no longer pending: who decided, and how it ended."""
    if call.status == Call.Status.PENDING:
        return ""
    if call.status in Call.CUT_SHORT:
        return f"{call.get_status_display()}" + (
            f": {call.reason or call.error}" if (call.reason or call.error) else ""
        )
    if call.decided_by_name == "policy":
        who = f"{'Denied' if call.status == Call.Status.DENIED else 'Allowed'} by policy"
    else:
        who = f"{'Denied' if call.status == Call.Status.DENIED else 'Approved'} by {decider(call)}"
    if call.status == Call.Status.DENIED:
        return who + (f": {call.reason}" if call.reason else "")
    edited = " with edited arguments" if call.edited_arguments is not None else ""
    state = {
        Call.Status.APPROVED: "",
        Call.Status.FORWARDED: " · running upstream",
        Call.Status.COMPLETED: " · completed",
        Call.Status.FAILED: " · failed",
    }.get(call.status, "")
    return who + edited + state


def trace_id(call: Call) -> str:
    """The trace the call's arrival belonged to, when the console was traced (approvals.observe.traces)."""
    data = AuditEvent.objects.filter(call_id=call.pk, action="call.received").values_list("data", flat=True).first()
    return (data or {}).get("trace_id", "")
