"""Revoking a client token, or reaching its expiry, and cancelling the calls it has waiting.

Each change is one audit event with the token before and after, in the same transaction.
"""

from django.db import transaction
from django.utils import timezone

from approvals.audit import chain
from approvals.audit.chain import SYSTEM
from approvals.audit.snapshots import snapshot
from approvals.calls import ending
from approvals.calls.models import Call
from approvals.oauth import consent_tokens
from approvals.tokens.credentials import AUDITED, actor_of, stamp
from approvals.tokens.models import ClientToken

REVOKED_REASON = "the client token was revoked"


@transaction.atomic
def revoke_token(token: ClientToken, user=None) -> bool:
    """Refuse the token from now on and cancel its calls that wait; False when it was revoked already."""
    before = snapshot(token, AUDITED)
    revoked = ClientToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
    token.refresh_from_db()
    if revoked:
        actor = actor_of(user)
        # One append at the end: the audit head is locked only after every call's row, in the order a
        # decision takes them (the call, then the head), so that a decision racing this cannot deadlock it.
        with chain.batch():
            chain.record(
                "token.revoked", actor, token=token, data={"before": before, "after": snapshot(token, AUDITED)}
            )
            end_calls_and_grant(token, REVOKED_REASON, actor)
    return bool(revoked)


def end_calls_and_grant(token: ClientToken, reason: str, actor) -> int:
    """What a revoked token leaves: its waiting calls cancelled (their clients told `reason`), the refresh tokens
    of its OAuth grant revoked. How many calls were cancelled."""
    cancelled = ending.cancel_unforwarded(Call.objects.filter(token=token), reason, actor)
    consent_tokens.end_grant(token)
    return cancelled


def expired_reason(token: ClientToken) -> str:
    return f"the client token expired at {stamp(token.expires_at)}"


def cancel_calls_of_expired_tokens() -> int:
    """Cancel the waiting calls of each token past its expiry, as a revocation does: no later approval runs them.

    The client is refused from its expiry on, but a call made before it would otherwise wait on, and
    could still be approved and run. Each cancellation is audited and the queue's row updated live.
    """
    expired = (
        Call.objects.filter(status__in=Call.OPEN, token__expires_at__lte=timezone.now(), token__revoked_at__isnull=True)
        .values_list("token_id", flat=True)
        .distinct()
    )
    cancelled = 0
    for token in ClientToken.objects.filter(pk__in=list(expired)):
        with transaction.atomic(), chain.batch():
            cancelled += ending.cancel_unforwarded(Call.objects.filter(token=token), expired_reason(token), SYSTEM)
    return cancelled
