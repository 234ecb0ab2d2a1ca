"""Client tokens: random, shown once, stored as hashes, scoped by tool globs, expiring, rotated, revocable."""

import datetime
import functools
import hashlib
import secrets
from dataclasses import dataclass
from fnmatch import fnmatchcase

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from approvals import roles
from approvals.audit import chain
from approvals.audit.chain import Actor
from approvals.audit.snapshots import snapshot
from approvals.db import kept as db_kept
from approvals.tokens.models import ClientToken, RetiredSecret

PREFIX = "mcpc_"
# last_used_at and last_used_from are written at most this often: a busy client must not make every call a write.
TOUCH_INTERVAL = datetime.timedelta(minutes=1)


def hash_secret(secret: str) -> str:
    # The secret carries 256 random bits, so a plain SHA-256 is as strong as a slow hash here.
    return hashlib.sha256(secret.encode()).hexdigest()


def new_secret() -> tuple[str, str]:
    """A fresh secret and the prefix by which people recognise it."""
    secret = PREFIX + secrets.token_urlsafe(32)
    return secret, secret[: len(PREFIX) + 6]


def actor_of(user) -> Actor:
    return Actor.user(user) if user else chain.SYSTEM


def stamp(when: datetime.datetime | None) -> str | None:
    return when.astimezone(datetime.UTC).isoformat(timespec="seconds") if when else None


# What a change of a token records of it, before and after; never its secret.
AUDITED = (
    "name",
    "prefix",
    "tool_globs",
    "owner",
    "description",
    "expires_at",
    "rate_per_minute",
    "max_pending_calls",
    "revoked_at",
)


@transaction.atomic
def create_token(name: str, tool_globs=None, user=None, **details) -> tuple[ClientToken, str]:
    """A new token and its secret; the secret exists only in what this returns.

    `details` are further ClientToken fields: owner, description, expires_at, rate_per_minute, max_pending_calls.
    """
    secret, prefix = new_secret()
    token = ClientToken.objects.create(
        name=name,
        prefix=prefix,
        token_hash=hash_secret(secret),
        tool_globs=list(tool_globs or ["*"]),
        created_by=user,
        **details,
    )
    chain.record("token.created", actor_of(user), token=token, data={"before": None, "after": snapshot(token, AUDITED)})
    return token, secret


@dataclass
class Admission:
    """What a presented secret comes to: the token it opens, or why it opens none."""

    token: ClientToken | None
    refusal: str = ""


UNKNOWN = "the bearer token is unknown"


def admit(secret: str, peer: str = "", kept: bool = False) -> Admission:
    """The token this secret opens now, noting when and from where it was used; else why it is refused.

    With `kept`, the rows as db.kept keeps them, for a caller that has just refreshed the stamp.
    """
    if not secret.startswith(PREFIX):
        return Admission(None, UNKNOWN)
    digest, now = hash_secret(secret), timezone.now()
    found = db_kept.load("secret", digest, functools.partial(holder_of, digest), kept=kept)
    if found is None:
        return Admission(None, UNKNOWN)
    return admit_found(found, peer, now, kept)


def admit_kept(secret: str, digest: str) -> Admission | None:
    """admit's answer from what db.kept keeps alone, with no query: None when it would need one (the secret or
    its owner's standing not kept) or would write (its use due to be noted). For an event loop, just refreshed."""
    found = db_kept.peek("secret", digest) if secret.startswith(PREFIX) else None
    if found is None:
        return None
    token, now = found[0], timezone.now()
    if token.owner_id is not None and db_kept.peek("standing", token.owner_id) is None:
        return None
    if use_due(token, now):
        return None
    return admit_found(found, "", now, kept=True)


def admit_found(found: tuple, peer: str, now: datetime.datetime, kept: bool) -> Admission:
    token, retired = found
    if retired is not None and retired.valid_until <= now and not (token.revoked or token.expired(now)):
        return Admission(
            None,
            f"the bearer token {token.name!r} was replaced by rotation at {stamp(retired.retired_at)} and its old "
            f"secret's grace period ended at {stamp(retired.valid_until)}; use the new secret",
        )
    return admit_token(token, peer, now, kept=kept)


def admit_token(token: ClientToken, peer: str = "", now: datetime.datetime | None = None, kept=False) -> Admission:
    """The token itself, if neither revoked nor expired and its owner still in standing, noting its use; whatever
    secret or grant opened it. With `kept`, the owner's standing as db.kept keeps it."""
    now = now or timezone.now()
    if token.revoked:
        return Admission(None, f"the bearer token {token.name!r} was revoked at {stamp(token.revoked_at)}")
    if token.expired(now):
        return Admission(None, f"the bearer token {token.name!r} expired at {stamp(token.expires_at)}")
    if not owner_in_standing(token, kept):
        return Admission(None, f"the bearer token {token.name!r} belongs to a person whose access to the console ended")
    note_use(token, peer, now)
    return Admission(token)


def owner_in_standing(token: ClientToken, kept=False) -> bool:
    """Whether the token's owner, if it has one, is active and holds a role. The token is revoked as its owner
    loses either (actions/person_access); this holds where that did not run, as after a bulk update of users."""
    if token.owner_id is None:
        return True
    return db_kept.load("standing", token.owner_id, functools.partial(roles.in_standing, token.owner_id), kept=kept)


def holder_of(digest: str) -> tuple[ClientToken, RetiredSecret | None] | None:
    """The token a secret of this digest opens, and the retired secret it is if it is one."""
    token = ClientToken.objects.filter(token_hash=digest).first()
    if token is not None:
        return token, None
    retired = RetiredSecret.objects.select_related("token").filter(token_hash=digest).first()
    return (retired.token, retired) if retired is not None else None


def use_due(token: ClientToken, now: datetime.datetime) -> bool:
    return token.last_used_at is None or now - token.last_used_at > TOUCH_INTERVAL


def note_use(token: ClientToken, peer: str, now: datetime.datetime):
    if use_due(token, now):
        token.last_used_at, token.last_used_from = now, peer[:100]
        ClientToken.objects.filter(pk=token.pk).update(last_used_at=now, last_used_from=token.last_used_from)


def still_valid(token_pk) -> bool:
    """Whether the token may still be served: neither revoked nor expired, its owner in standing. Its secret may
    have been rotated since."""
    valid = ClientToken.objects.filter(pk=token_pk, revoked_at__isnull=True)
    token = valid.filter(Q(expires_at__isnull=True) | Q(expires_at__gt=timezone.now())).first()
    return token is not None and owner_in_standing(token)


def authenticate(secret: str) -> ClientToken | None:
    return admit(secret).token


def anonymous_token() -> ClientToken:
    token, _ = ClientToken.objects.get_or_create(name=ClientToken.ANONYMOUS, defaults={"tool_globs": ["*"]})
    return token


def token_allows(token: ClientToken, tool_name: str) -> bool:
    return any(fnmatchcase(tool_name, glob) for glob in token.tool_globs or [])
