"""Changing a client token after it was issued: its details, a rotation of its secret (revoking: actions.revocation).

Each change is one audit event with the token before and after, in the same transaction.
"""

import datetime

from django.db import transaction
from django.utils import timezone

from approvals.audit import chain
from approvals.audit.snapshots import snapshot
from approvals.tokens.credentials import AUDITED, actor_of, hash_secret, new_secret, stamp
from approvals.tokens.models import ClientToken, RetiredSecret

# What a client token's owner may change after issuing it; its name and secret stay.
EDITABLE = ("tool_globs", "owner", "description", "expires_at", "rate_per_minute", "max_pending_calls")


@transaction.atomic
def change_token(token: ClientToken, changes: dict, user=None) -> bool:
    """Apply `changes` (fields of EDITABLE) to a token not revoked; False when there was nothing to change."""
    token = ClientToken.objects.select_for_update().get(pk=token.pk)
    before = snapshot(token, AUDITED)
    for field, value in changes.items():
        if field not in EDITABLE:
            raise ValueError(f"{field} cannot be changed")
        setattr(token, field, value)
    after = snapshot(token, AUDITED)
    if token.revoked or before == after:
        return False
    token.save(update_fields=list(changes))
    chain.record("token.changed", actor_of(user), token=token, data={"before": before, "after": after})
    return True


@transaction.atomic
def rotate_token(token: ClientToken, grace: datetime.timedelta, user=None) -> str | None:
    """A new secret for the token, returned once; the old one stays valid for `grace`. None for a revoked token."""
    token = ClientToken.objects.select_for_update().get(pk=token.pk)
    if token.revoked or not token.token_hash:
        return None
    now, before = timezone.now(), snapshot(token, AUDITED)
    RetiredSecret.objects.create(
        token=token, token_hash=token.token_hash, prefix=token.prefix, retired_at=now, valid_until=now + grace
    )
    secret, token.prefix = new_secret()
    token.token_hash, token.rotated_at = hash_secret(secret), now
    token.save(update_fields=["token_hash", "prefix", "rotated_at"])
    data = {"before": before, "after": snapshot(token, AUDITED), "old_secret_valid_until": stamp(now + grace)}
    chain.record("token.rotated", actor_of(user), token=token, data=data)
    return secret
