"""Personal API keys: random, shown once, stored as hashes, bound to a user, revocable, each change audited."""

import secrets

from django.db import transaction
from django.utils import timezone

from approvals.api.models import ApiKey
from approvals.audit import chain
from approvals.audit.chain import Actor
from approvals.live import events
from approvals.tokens.credentials import TOUCH_INTERVAL, hash_secret

PREFIX = "mcpk_"
MAX_NAME = 100


def new_key() -> tuple[str, str]:
    """A fresh key and the prefix by which people recognise it."""
    secret = PREFIX + secrets.token_urlsafe(32)
    return secret, secret[: len(PREFIX) + 6]


@transaction.atomic
def create_key(user, name: str, expires_at=None, read_only: bool = False) -> tuple[ApiKey, str]:
    """A new key for `user` and its secret; the secret exists only in what this returns."""
    secret, prefix = new_key()
    key = ApiKey.objects.create(
        user=user,
        name=name.strip()[:MAX_NAME],
        prefix=prefix,
        key_hash=hash_secret(secret),
        expires_at=expires_at,
        read_only=read_only,
    )
    data = {"key_id": key.pk, "name": key.name, "prefix": prefix, "read_only": read_only}
    chain.record("api_key.created", Actor.user(user), data={**data, "expires_at": stamp(expires_at)})
    return key, secret


def stamp(when) -> str | None:
    return when.isoformat() if when else None


@transaction.atomic
def revoke_key(user, key_id) -> bool:
    """Revoke one of the user's own keys; False when it is not theirs or already revoked."""
    now = timezone.now()
    revoked = ApiKey.objects.filter(pk=key_id, user=user, revoked_at__isnull=True).update(revoked_at=now)
    if revoked:
        key = ApiKey.objects.get(pk=key_id)
        data = {"key_id": key.pk, "name": key.name, "prefix": key.prefix}
        chain.record("api_key.revoked", Actor.user(user), data=data)
        # Its open event streams look again at once, as the user's sockets do when their access changes.
        events.access_changed([user.pk])
    return bool(revoked)


def key_of(secret: str) -> ApiKey | None:
    """The key, with its active user, noting its use; None for an unknown, revoked, expired or deactivated one's key."""
    if not secret.startswith(PREFIX):
        return None
    key = ApiKey.objects.select_related("user").filter(key_hash=hash_secret(secret), revoked_at__isnull=True).first()
    now = timezone.now()
    if key is None or not key.user.is_active or (key.expires_at is not None and key.expires_at <= now):
        return None
    # Written at most once a TOUCH_INTERVAL: a busy bot must not make every request a write.
    if key.last_used_at is None or now - key.last_used_at > TOUCH_INTERVAL:
        ApiKey.objects.filter(pk=key.pk).update(last_used_at=now)
    return key


def user_of(secret: str):
    """The active user a usable key acts as, else None."""
    key = key_of(secret)
    return key.user if key else None


def keys_of(user):
    return ApiKey.objects.filter(user=user)
