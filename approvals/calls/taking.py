"""An operator taking a pending call, and giving it back: who is on it.

A claim decides nothing: it tells the other operators that someone took the call. Its taker or
an admin releases it; a decision or the end of the call leaves it as it was, for the record.
"""

from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from approvals import roles
from approvals.audit import chain
from approvals.audit.chain import Actor
from approvals.calls.models import Call
from approvals.live import events


@dataclass
class ClaimOutcome:
    won: bool
    call: Call
    message: str


def locked_pending(call_id) -> Call | None:
    return Call.objects.select_for_update().filter(pk=call_id, status=Call.Status.PENDING).first()


@transaction.atomic
def claim_call(call_id, user) -> ClaimOutcome:
    """`user` takes the pending call, unless someone else has it; Call.DoesNotExist for no such call."""
    call = locked_pending(call_id)
    if call is None:
        return ClaimOutcome(False, Call.objects.get(pk=call_id), "The call no longer waits for a decision.")
    if call.claimed_by_name and call.claimed_by_id != user.pk:
        return ClaimOutcome(False, call, f"{call.claimed_by_name} is on it already.")
    if call.claimed_by_id == user.pk:
        return ClaimOutcome(True, call, "You are on it.")
    call.claimed_by, call.claimed_by_name, call.claimed_at = user, user.get_username(), timezone.now()
    call.save(update_fields=["claimed_by", "claimed_by_name", "claimed_at"])
    chain.record("call.claimed", Actor.user(user), call=call, data={})
    events.changed(call, "call.claimed")
    return ClaimOutcome(True, call, "You are on it.")


def may_release(call: Call, user) -> bool:
    return bool(call.claimed_by_name) and (call.claimed_by_id == user.pk or roles.is_admin(user))


@transaction.atomic
def release_claim(call_id, user) -> ClaimOutcome:
    """The call's taker, or an admin, gives it back; Call.DoesNotExist for no such call."""
    call = Call.objects.select_for_update().get(pk=call_id)
    if not call.claimed_by_name:
        return ClaimOutcome(False, call, "Nobody is on this call.")
    if not may_release(call, user):
        return ClaimOutcome(False, call, f"Only {call.claimed_by_name} or an admin may release it.")
    released = call.claimed_by_name
    call.claimed_by, call.claimed_by_name, call.claimed_at = None, "", None
    call.save(update_fields=["claimed_by", "claimed_by_name", "claimed_at"])
    chain.record("call.released", Actor.user(user), call=call, data={"claimed_by": released})
    events.changed(call, "call.released")
    return ClaimOutcome(True, call, f"Released from {released}.")
