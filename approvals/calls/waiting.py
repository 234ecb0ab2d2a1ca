"""Whether a token may have one more call wait for an operator's decision: its cap of pending calls."""

from approvals.calls.models import Call
from approvals.db import batch_reads
from approvals.tokens.models import ClientToken
from approvals.tokens.quotas import pending_cap


def why_no_more_pending(token: ClientToken) -> str:
    """Why this token may not have one more call wait for a decision now; empty when it may.

    It locks the token's row, so that calls arriving together count one another,
    and a revocation either waits for this call to be recorded, and cancels it, or
    is seen here.
    """
    locked = ClientToken.objects.select_for_update().filter(pk=token.pk)
    row = batch_reads.once(("token", token.pk), locked.values("revoked_at", "max_pending_calls").first)
    if row is None or row["revoked_at"] is not None:
        return "the client token was revoked"
    cap = pending_cap(row["max_pending_calls"])
    if not cap:
        return ""
    waiting = Call.objects.filter(token_id=token.pk, status=Call.Status.PENDING).count()
    if waiting < cap:
        return ""
    return (
        f"this client token may have at most {cap} calls waiting for an operator's decision at once, "
        f"and {waiting} are waiting now. Call again once some of them are decided"
    )
