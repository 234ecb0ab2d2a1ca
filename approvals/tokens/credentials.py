"""Client tokens: random, shown once, stored as hashes, scoped by tool globs, revocable."""

import hashlib
import secrets
from fnmatch import fnmatchcase

from django.db import transaction
from django.utils import timezone

from approvals.audit import chain
from approvals.audit.chain import Actor
from approvals.models import ClientToken

PREFIX = "mcpc_"


def hash_secret(secret: str) -> str:
    # The secret carries 256 random bits, so a plain SHA-256 is as strong as a slow hash here.
    return hashlib.sha256(secret.encode()).hexdigest()


@transaction.atomic
def create_token(name: str, tool_globs=None, user=None) -> tuple[ClientToken, str]:
    """A new token and its secret; the secret exists only in what this returns."""
    secret = PREFIX + secrets.token_urlsafe(32)
    token = ClientToken.objects.create(
        name=name,
        prefix=secret[: len(PREFIX) + 6],
        token_hash=hash_secret(secret),
        tool_globs=list(tool_globs or ["*"]),
        created_by=user,
    )
    actor = Actor.user(user) if user else chain.SYSTEM
    chain.record(
        "token.created", actor, token=token, data={"name": name, "tool_globs": token.tool_globs, "prefix": token.prefix}
    )
    return token, secret


@transaction.atomic
def revoke_token(token: ClientToken, user=None) -> bool:
    revoked = ClientToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
    if revoked:
        actor = Actor.user(user) if user else chain.SYSTEM
        chain.record("token.revoked", actor, token=token, data={"name": token.name})
    token.refresh_from_db()
    return bool(revoked)


def authenticate(secret: str) -> ClientToken | None:
    if not secret.startswith(PREFIX):
        return None
    token = ClientToken.objects.filter(token_hash=hash_secret(secret), revoked_at__isnull=True).first()
    if token is not None and (token.last_used_at is None or (timezone.now() - token.last_used_at).total_seconds() > 60):
        # Written at most once a minute per token: a busy client must not make every call a write.
        ClientToken.objects.filter(pk=token.pk).update(last_used_at=timezone.now())
    return token


def anonymous_token() -> ClientToken:
    token, _ = ClientToken.objects.get_or_create(name=ClientToken.ANONYMOUS, defaults={"tool_globs": ["*"]})
    return token


def token_allows(token: ClientToken, tool_name: str) -> bool:
    return any(fnmatchcase(tool_name, glob) for glob in token.tool_globs or [])
