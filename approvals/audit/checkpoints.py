"""Checkpoints: the public chain's head signed with an Ed25519 key kept outside the database.

The keyed chain convinces only whoever holds AUDIT_KEY. A checkpoint convinces anyone
with the public key: it signs the head's sequence number, the public chain's value
through it (approvals.audit.chain) and the time, so an export that recomputes to that
value was written by this console and is whole up to that event (tools/verify_export.py).

The signed bytes are one ASCII line, kept as they were signed, so that a checkpoint
can be filed as-is and checked by any Ed25519 implementation, openssl included:

    audit-checkpoint v1 seq=SEQ chain=PUBLIC_HASH at=ISO-8601-UTC

Before signing, the public chain is recomputed from the newest checkpoint to the head:
whoever holds the database can recompute an unkeyed chain over events they changed,
but a checkpoint never signs a chain that does not extend the one signed before.
"""

import base64
import hashlib
from contextlib import closing
from functools import lru_cache
from json import JSONDecoder
from json.scanner import c_make_scanner

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.conf import settings
from django.db import transaction
from django.db.models import TextField
from django.db.models.functions import Cast
from django.utils import timezone

from approvals.audit.encoding import HASHED, encode_event
from approvals.audit.models import AuditCheckpoint, AuditEvent, AuditHead
from approvals.audit.public_chain import public_chain_value
from approvals.audit.streaming import stream_rows


class Refused(Exception):
    """The public chain since the newest checkpoint does not recompute: nothing is signed."""

    def __init__(self, seq, expected, found):
        super().__init__(
            f"the public chain does not recompute at seq {seq} (expected {expected}, found {found}): "
            "an event was changed, removed or reordered since the newest checkpoint"
        )


@lru_cache(maxsize=4)
def private_key(secret: str) -> Ed25519PrivateKey:
    """AUDIT_SIGNING_KEY as a key: a PEM Ed25519 private key (`openssl genpkey -algorithm ed25519`), or any
    other secret text, whose SHA-256 is then the key's seed (what an embedded console generates)."""
    if secret.lstrip().startswith("-----BEGIN"):
        key = serialization.load_pem_private_key(secret.encode(), password=None)
        if not isinstance(key, Ed25519PrivateKey):
            raise ValueError("AUDIT_SIGNING_KEY must be an Ed25519 private key")
        return key
    return Ed25519PrivateKey.from_private_bytes(hashlib.sha256(secret.encode()).digest())


def signing_key() -> Ed25519PrivateKey:
    return private_key(settings.AUDIT_SIGNING_KEY)


def public_key_pem() -> str:
    return (
        signing_key()
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )


def key_id() -> str:
    """The SHA-256 of the raw public key, which names the key a checkpoint was signed with."""
    raw = signing_key().public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()


def sign(data: bytes) -> str:
    """The base64 Ed25519 signature of `data` with AUDIT_SIGNING_KEY."""
    return base64.b64encode(signing_key().sign(data)).decode()


def message(seq: int, public_hash: str, at) -> str:
    return f"audit-checkpoint v1 seq={seq} chain={public_hash} at={at.isoformat()}"


def take() -> AuditCheckpoint | None:
    """Sign the head unless the newest checkpoint already does; None while the log is empty. Refused when the
    public chain since the newest checkpoint does not recompute."""
    with transaction.atomic():
        head = AuditHead.objects.filter(pk=1).first()
        newest = AuditCheckpoint.objects.first()
        if head is None or head.seq == 0 or (newest is not None and newest.seq == head.seq):
            return newest
        start_seq, start = head.anchor_seq, head.anchor_public_hash
        if newest is not None and newest.seq >= head.anchor_seq:
            start_seq, start = newest.seq, newest.public_hash
        recompute(start_seq, start, head)
        at = timezone.now()
        signed = message(head.seq, head.public_hash, at)
        return AuditCheckpoint.objects.create(
            seq=head.seq,
            public_hash=head.public_hash,
            at=at,
            signed=signed,
            signature=sign(signed.encode("ascii")),
            key_id=key_id(),
        )


def recompute(after_seq: int, value: str, head: AuditHead):
    """The public chain from `value` after `after_seq` must give each event's stored value and the head's."""
    events = (
        AuditEvent.objects.filter(seq__gt=after_seq, seq__lte=head.seq)
        .order_by("seq")
        .annotate(data_text=Cast("data", TextField()))
        .values_list(*HASHED[:11], "data_text", "prev_hash", "public_hash")
    )
    scan = c_make_scanner(JSONDecoder())
    next_seq = after_seq + 1
    with closing(stream_rows(events)) as rows:
        for row in rows:
            if row[0] != next_seq:
                raise Refused(next_seq, f"seq {next_seq}", f"seq {row[0]}")
            value = public_chain_value(value, encode_event((*row[:11], scan(row[11], 0)[0], row[12])))
            if value != row[13]:
                raise Refused(row[0], value, row[13])
            next_seq += 1
    if next_seq - 1 != head.seq or value != head.public_hash:
        raise Refused(head.seq, value, head.public_hash)


def newest_through(seq: int) -> AuditCheckpoint | None:
    """The newest checkpoint at or before `seq`."""
    return AuditCheckpoint.objects.filter(seq__lte=seq).first()


def first_from(seq: int) -> AuditCheckpoint | None:
    """The oldest checkpoint at or after `seq`: the one that covers an event at `seq`."""
    return AuditCheckpoint.objects.filter(seq__gte=seq).order_by("seq", "id").first()


def as_dict(checkpoint: AuditCheckpoint) -> dict:
    return {
        "seq": checkpoint.seq,
        "chain": checkpoint.public_hash,
        "at": checkpoint.at.isoformat(),
        "signed": checkpoint.signed,
        "signature": checkpoint.signature,
        "key_id": checkpoint.key_id,
    }
