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


INPUT_ASKED = {"elicitation/create": "Input asked", "sampling/createMessage": "Completion asked"}


def input_steps(call: Call) -> list[tuple[str, datetime | None, str]]:
    """What the upstream asked during the call, and how each request ended, as timeline steps."""
    steps = []
    for asked in call.input_requests.select_related("server"):
        who = asked.server.name if asked.server else "the server"
        steps.append(
            (INPUT_ASKED.get(asked.method, "Asked"), asked.created_at, f"{who}: {asked.message or asked.method}")
        )
        if asked.answered_at is not None:
            parts = [f"by {asked.answered_by_name}" if asked.answered_by_name else "", asked.reason]
            ended = "Input " + asked.get_status_display().lower()
            steps.append((ended, asked.answered_at, ": ".join(part for part in parts if part)))
    return steps


def call_timeline(call: Call) -> list[Step]:
    """Every step of the call in the order it happened, the input its upstream asked for included."""
    policy = POLICY_WORDS.get(call.policy_action, call.policy_action)
    candidates = [
        ("Received", call.received_at, f"from {call.token.name}"),
        ("Policy", call.policy_at, f"{policy} ({call.rule_name})" if call.rule_name else policy),
        ("Claimed", call.claimed_at, f"by {call.claimed_by_name}" if call.claimed_by_name else ""),
        ("Escalated", call.escalated_at, "it neared its expiry undecided"),
        ("Decided", call.decided_at if call.decided_by_name != "policy" else None, decided_detail(call)),
        ("Forwarded", call.forwarded_at, f"to {call.server.name}" if call.server else ""),
        *input_steps(call),
        ("Answered", call.answered_at, answered_detail(call)),
    ]
    # A stable sort: steps of one instant keep the order above.
    candidates = sorted((step for step in candidates if step[1] is not None), key=lambda step: step[1])
    steps, previous = [], None
    for name, at, detail in candidates:
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
