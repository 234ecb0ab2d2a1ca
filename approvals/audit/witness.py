"""The witness: the newest head a verification found intact, kept outside the database.

The HMAC links stop whoever holds the database from forging or mending events, but
not from cutting the chain's end: deleting the newest events and setting the head
back to an earlier event leaves a chain whose every link verifies. Nothing inside
the database can tell that head from the real one, since the earlier head was itself
genuine. So each verification that passes leaves its head here, in a store the
database login does not reach (Redis in production, a file under var/ embedded),
signed with AUDIT_KEY so that this store cannot raise it either, and the next
verification requires that head to be still in the chain, unchanged.

What the database's owner can still hide: the events written since the last
verification that passed (beat runs one every AUDIT_VERIFY_INTERVAL_SECONDS).
What it cannot: anything a verification has seen, short of also holding AUDIT_KEY
or the witness's store. Losing the witness (a new Redis, an emptied var/) loses no
event; the check starts again from the next verification.
"""

import hmac

from django.conf import settings
from django.core.cache import caches
from django.db import connection


class Forged(Exception):
    """A witness whose signature is not AUDIT_KEY's: written by someone else, or AUDIT_KEY changed."""


class Unreachable(Exception):
    """The witness store (Redis, or the file under var/) did not answer: a cut end can be neither seen nor ruled out."""


def _store(operation: str, *args):
    try:
        return getattr(caches["audit_witness"], operation)(*args)
    except Exception as exc:
        raise Unreachable(f"the witness store did not answer ({type(exc).__name__}: {exc})") from exc


def key() -> str:
    # One witness per database, so consoles (and test runs) that share a Redis keep apart.
    return f"audit-witness:{connection.settings_dict['NAME']}"


def signature(seq: int, hash_: str) -> str:
    return hmac.new(settings.AUDIT_KEY.encode(), f"{key()}:{seq}:{hash_}".encode(), "sha256").hexdigest()


def read() -> tuple[int, str] | None:
    """The witnessed (seq, hash), or None when there is none yet; Forged when its signature fails."""
    kept = _store("get", key())
    if kept is None:
        return None
    seq, hash_, signed = kept
    if not hmac.compare_digest(signed, signature(seq, hash_)):
        raise Forged()
    return seq, hash_


def raise_to(seq: int, hash_: str):
    """Keep (seq, hash) unless the witness already holds a later head.

    Read then write: two verifications racing may leave the earlier of their heads,
    which only narrows what the next verification checks, never makes it fail.
    """
    current = read()
    if current is None or seq > current[0]:
        replace(seq, hash_)


def replace(seq: int, hash_: str):
    """Witness (seq, hash) whatever was witnessed before: after a restore, the head an operator accepts."""
    _store("set", key(), (seq, hash_, signature(seq, hash_)))
