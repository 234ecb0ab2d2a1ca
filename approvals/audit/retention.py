"""How long audit events are kept, and pruning the ones past it.

Pruning deletes a prefix of the chain and leaves the rest verifiable: the sequence
number and hash of the last pruned event become the anchor that verification starts
from, and an audit.pruned event, itself in the chain, records that anchor, so a
prefix deleted any other way shows up as an anchor nothing attests.

On PostgreSQL a trigger refuses UPDATE and DELETE on the events table unless the
transaction has set `approvals.audit_prune` to 'on'. Only prune() sets it, with
set_config(..., is_local => true), the function form of SET LOCAL, so it ends with
the transaction at the latest. Any session may set it, so further triggers
(migration 0002) bound what it allows: events only up to the head's anchor, and the
anchor only onto an event older than 23 hours, so the switch can never take the newest
events. Pruning is audited and the anchor checked all the same.
"""

from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from approvals.audit import chain
from approvals.audit.chain import SYSTEM, Actor
from approvals.audit.models import AuditEvent, AuditHead, AuditSettings

PRUNE_SETTING = "approvals.audit_prune"


def retention_days() -> int:
    """Days events are kept; 0 keeps them forever. An admin's setting wins over AUDIT_RETENTION_DAYS."""
    chosen = AuditSettings.objects.filter(pk=1).values_list("retention_days", flat=True).first()
    return settings.AUDIT_RETENTION_DAYS if chosen is None else chosen


@transaction.atomic
def set_retention(days: int, user) -> bool:
    """Change the retention; False when it already was `days`."""
    before = retention_days()
    if before == days:
        return False
    AuditSettings.objects.update_or_create(
        pk=1, defaults={"retention_days": days, "updated_by_name": user.get_username(), "updated_at": timezone.now()}
    )
    chain.record("retention.changed", Actor.user(user), data={"before": before, "after": days})
    return True


@dataclass
class Pruned:
    deleted: int
    through_seq: int
    cutoff: object

    def summary(self) -> str:
        if not self.deleted:
            return f"Nothing older than {self.cutoff:%Y-%m-%d %H:%M} UTC to prune."
        return (
            f"Pruned {self.deleted} events older than {self.cutoff:%Y-%m-%d %H:%M} UTC, through seq {self.through_seq}."
        )


def prune(now=None, actor: Actor = SYSTEM) -> Pruned | None:
    """Delete the events older than the retention; None when events are kept forever."""
    days = retention_days()
    if not days:
        return None
    cutoff = (now or timezone.now()) - timedelta(days=days)
    with transaction.atomic():
        # Holding the head: no event is appended while the anchor moves.
        head = chain.locked_head()
        last = (
            AuditEvent.objects.filter(at__lt=cutoff, seq__lte=head.seq)
            .order_by("-at", "-seq")
            .values_list("seq", "hash", "public_hash")
            .first()
        )
        if last is None or last[0] <= head.anchor_seq:
            return Pruned(0, head.anchor_seq, cutoff)
        through_seq, through_hash, through_public = last
        # The anchor first: on PostgreSQL events are deleted only up to it (migration 0002).
        AuditHead.objects.filter(pk=head.pk).update(
            anchor_seq=through_seq, anchor_hash=through_hash, anchor_public_hash=through_public
        )
        allow_prune(True)
        deleted, _ = AuditEvent.objects.filter(seq__lte=through_seq).delete()
        allow_prune(False)
        chain.record(
            "audit.pruned",
            actor,
            data={
                "through_seq": through_seq,
                "through_hash": through_hash,
                "deleted": deleted,
                "cutoff": cutoff.isoformat(),
                "retention_days": days,
            },
        )
    return Pruned(deleted, through_seq, cutoff)


def allow_prune(on: bool):
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT set_config(%s, %s, true)", [PRUNE_SETTING, "on" if on else "off"])
