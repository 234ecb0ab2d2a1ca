"""Forwarding the audit log to a SIEM (AUDIT_FORWARD_URL): every event, in sequence order, at least once.

A celery task (or, embedded, the in-process periodic work) runs `forward`, never a call: a
receiver that is down costs the forwarder its timeout and no call anything. The cursor row
(AuditForwardCursor) keeps the last sequence number the receiver acknowledged and the public
chain value there; each run resumes after it, so events are sent again, never skipped, after a
restart of either side or an outage. A batch is acknowledged whole or not at all
(approvals.audit.siem_transport).
"""

import os
import socket
import time
import uuid
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from approvals.audit import siem_formats
from approvals.audit.encoding import HASHED, encode_event
from approvals.audit.models import AuditEvent, AuditForwardCursor, AuditHead
from approvals.audit.public_chain import public_chain_value
from approvals.audit.siem_transport import ForwardError, destination, sender_for

BATCH = 500
# A run stops sending after this long and leaves the rest to the next: the in-process periodic work
# runs one job at a time.
BUDGET_SECONDS = 20.0


@dataclass
class Forwarded:
    sent: int
    seq: int
    error: str = ""

    def summary(self) -> str:
        return f"{self.sent} events forwarded, through seq {self.seq}" + (f"; {self.error}" if self.error else "")


@dataclass
class Lag:
    destination: str
    events: int
    seconds: float
    acknowledged_seq: int
    acknowledged_at: object
    error: str


def configured() -> bool:
    return bool(settings.AUDIT_FORWARD_URL)


def cursor() -> AuditForwardCursor:
    row, _ = AuditForwardCursor.objects.get_or_create(destination=destination(settings.AUDIT_FORWARD_URL))
    return row


def forward(budget_seconds: float | None = None) -> Forwarded | None:
    """Send what the receiver has not acknowledged, batch by batch, for up to `budget_seconds`; None if unset."""
    if not configured():
        return None
    budget = BUDGET_SECONDS if budget_seconds is None else budget_seconds
    holder = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
    row = claim(cursor().pk, holder)
    if row is None:
        return Forwarded(0, 0, "another process is forwarding")
    sender = sender_for(
        settings.AUDIT_FORWARD_URL,
        timeout=settings.AUDIT_FORWARD_TIMEOUT_SECONDS,
        ca_file=settings.AUDIT_FORWARD_CA_FILE,
        token=settings.AUDIT_FORWARD_TOKEN,
    )
    entry = siem_formats.hec_entry if settings.AUDIT_FORWARD_URL.startswith("https:") else siem_formats.syslog_entry
    deadline, sent = time.monotonic() + budget, 0
    try:
        while time.monotonic() < deadline:
            rows = list(AuditEvent.objects.filter(seq__gt=row.seq).order_by("seq").values_list(*HASHED, "hash")[:BATCH])
            if not rows:
                break
            value, entries = row.chain_value, []
            for event in rows:
                value = public_chain_value(value, encode_event(event))
                entries.append(entry(siem_formats.event_fields(event, value), settings.AUDIT_FORWARD_FORMAT))
            try:
                sender.send(entries)
            except ForwardError as error:
                settle(row, holder, error=str(error))
                return Forwarded(sent, row.seq, str(error))
            row.seq, row.chain_value = rows[-1][0], value
            if not settle(row, holder, acknowledged=True):
                return Forwarded(sent + len(rows), row.seq, "the lease passed to another process")
            sent += len(rows)
    finally:
        AuditForwardCursor.objects.filter(pk=row.pk, holder=holder).update(holder="", held_until=None)
    return Forwarded(sent, row.seq)


def lease() -> timedelta:
    # Longer than the slowest batch: a connection, a send and the close, each bounded by the timeout.
    return timedelta(seconds=max(60.0, 4 * settings.AUDIT_FORWARD_TIMEOUT_SECONDS))


def claim(pk, holder) -> AuditForwardCursor | None:
    """The cursor, leased to `holder`, unless another process holds a live lease on it."""
    now = timezone.now()
    free = Q(held_until__isnull=True) | Q(held_until__lt=now)
    if not AuditForwardCursor.objects.filter(free, pk=pk).update(holder=holder, held_until=now + lease()):
        return None
    return AuditForwardCursor.objects.get(pk=pk)


def settle(row, holder, *, acknowledged=False, error="") -> bool:
    """Keep where forwarding stands, while `holder` still holds the lease."""
    now = timezone.now()
    changes = {"attempted_at": now, "error": error, "held_until": now + lease()}
    if acknowledged:
        changes |= {"seq": row.seq, "chain_value": row.chain_value, "acknowledged_at": now}
    return bool(AuditForwardCursor.objects.filter(pk=row.pk, holder=holder).update(**changes))


def lag() -> Lag | None:
    """How far the receiver is behind the head: events, and the age of the oldest one it has not acknowledged."""
    if not configured():
        return None
    row = cursor()
    head_seq = AuditHead.objects.filter(pk=1).values_list("seq", flat=True).first() or 0
    oldest = AuditEvent.objects.filter(seq__gt=row.seq).order_by("seq").values_list("at", flat=True).first()
    seconds = (timezone.now() - oldest).total_seconds() if oldest else 0.0
    return Lag(row.destination, max(0, head_seq - row.seq), max(0.0, seconds), row.seq, row.acknowledged_at, row.error)
