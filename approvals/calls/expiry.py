"""A held call's expiry: the deadline it is given as it is held, and its end once the deadline passes.

How long a call may wait is the rule's (calls.hold_terms), or APPROVAL_TIMEOUT_SECONDS; a client keeping the
call's task for less shortens it. The request waiting on a call expires it at the deadline (calls.runner,
calls.task_runner); expire_stale_calls, run periodically, expires those whose request is gone. A rule may
also ask that its calls be escalated ahead of their deadline (escalate_due_calls).
"""

from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from approvals.audit import chain
from approvals.audit.chain import SYSTEM
from approvals.calls import ending
from approvals.calls.models import Call
from approvals.live import events


def deadline(call: Call, timeout: float, now):
    """When `call`, held from `now` for the `timeout` seconds its rule gives it, expires."""
    if call.task_ttl_ms is not None:
        # The client keeps the task no longer than its TTL: nobody would collect a later approval.
        timeout = min(timeout, call.task_ttl_ms / 1000)
    return now + timedelta(seconds=timeout)


def expire(call: Call) -> bool:
    """End a pending call whose deadline passed; False when a decision or another end came first."""
    return ending.end_pending(call.pk, Call.Status.EXPIRED, expired_reason(call))


def expired_reason(call: Call) -> str:
    """What an expired call's client is told: the wait its rule (or the global setting) gave it."""
    seconds = (call.expires_at - call.received_at).total_seconds()
    wait = f"{seconds:g} seconds" if seconds < 120 else f"{seconds / 60:g} minutes"
    if call.approvals_needed > 1:
        return f"fewer than {call.approvals_needed} operators approved within {wait}"
    return f"no operator decided within {wait}"


def expire_stale_calls() -> int:
    """End calls whose waiting request is gone (a crashed or restarted process), so none is left hanging.

    Pending calls past their deadline expire; open calls whose process stopped renewing
    their lease are abandoned; approved or running calls that no answer could still
    reach (past the upstream call timeout) fail.
    """
    now = timezone.now()
    stale = Call.objects.filter(status=Call.Status.PENDING, expires_at__lte=now).only(
        "received_at", "expires_at", "approvals_needed"
    )
    expired = sum(expire(call) for call in list(stale))
    abandoned = ending.end_abandoned_calls()
    # A minute's grace beyond the longest an upstream call may take, for the answer to be written.
    cutoff = now - timedelta(seconds=settings.UPSTREAM_CALL_TIMEOUT_SECONDS + 60)
    running = Call.objects.filter(status__in=Call.IN_FLIGHT, decided_at__lte=cutoff).values_list("pk", flat=True)
    unanswered = sum(ending.fail_unanswered(pk, Call.IN_FLIGHT, ending.PROCESS_STOPPED) for pk in list(running))
    return expired + abandoned + unanswered


def escalate_due_calls() -> int:
    """Flag each pending call whose rule's escalation time has come, once, and announce it (call.escalated)."""
    due = Call.objects.filter(status=Call.Status.PENDING, escalated_at__isnull=True, escalates_at__lte=timezone.now())
    return sum(escalate(pk) for pk in list(due.values_list("pk", flat=True)))


@transaction.atomic
def escalate(call_id) -> bool:
    now = timezone.now()
    flagged = Call.objects.filter(pk=call_id, status=Call.Status.PENDING, escalated_at__isnull=True)
    if not flagged.update(escalated_at=now):
        return False
    call = Call.objects.select_related("token", "server").get(pk=call_id)
    chain.record("call.escalated", SYSTEM, call=call, data={"expires_at": call.expires_at.isoformat()})
    events.changed(call, "call.escalated")
    return True
