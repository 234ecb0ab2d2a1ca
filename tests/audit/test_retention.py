"""Retention: pruning the oldest events keeps the rest verifiable and is itself in the log."""

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from approvals import roles
from approvals.audit import encoding, retention, verify
from approvals.audit.models import AuditEvent, AuditHead
from approvals.audit.public_chain import public_chain_value
from tests.audit.conftest import append, trigger_disabled
from tests.fixtures.people import make_user


@pytest.fixture
def aged(chain):
    """The ten events of `chain`, the first four of them forty days old."""
    with trigger_disabled():
        AuditEvent.objects.filter(seq__lte=4).update(at=timezone.now() - timedelta(days=40))
    # Ageing rewrote them; rehash as if they had been written then.
    rehash()
    return chain


def rehash():
    previous = public = AuditHead.GENESIS
    with trigger_disabled():
        for event in AuditEvent.objects.order_by("seq"):
            event.prev_hash = previous
            encoded = encoding.encode_event(encoding.hashed_row(event))
            event.hash, public = encoding.keyed_hash(encoded), public_chain_value(public, encoded)
            AuditEvent.objects.filter(pk=event.pk).update(
                prev_hash=event.prev_hash, hash=event.hash, public_hash=public
            )
            previous = event.hash
        AuditHead.objects.update(hash=previous, public_hash=public)


def test_it_keeps_events_forever_by_default(aged):
    assert retention.retention_days() == 0
    assert retention.prune() is None
    assert AuditEvent.objects.count() == 10


def test_it_prunes_past_the_retention_and_the_rest_still_verifies(aged, settings):
    settings.AUDIT_RETENTION_DAYS = 30
    fourth = AuditEvent.objects.get(seq=4)
    pruned = retention.prune()
    assert (pruned.deleted, pruned.through_seq) == (4, 4)
    assert list(AuditEvent.objects.values_list("seq", flat=True)) == list(range(5, 12))
    head = AuditHead.objects.get()
    assert (head.anchor_seq, head.anchor_hash) == (4, fourth.hash)
    event = AuditEvent.objects.get(action="audit.pruned")
    assert event.data["through_seq"] == 4 and event.data["through_hash"] == fourth.hash and event.data["deleted"] == 4
    verdict = verify.verify_chain()
    assert verdict.ok, verdict.summary()
    assert (verdict.first_seq, verdict.last_seq) == (5, 11)


def test_it_prunes_nothing_twice(aged, settings):
    settings.AUDIT_RETENTION_DAYS = 30
    retention.prune()
    assert retention.prune().deleted == 0
    assert AuditEvent.objects.filter(action="audit.pruned").count() == 1


def test_it_prefers_the_admins_retention_to_the_environment_and_records_the_change(aged, settings):
    settings.AUDIT_RETENTION_DAYS = 30
    admin = make_user("admin", roles.ADMIN)
    assert retention.set_retention(0, admin)
    assert retention.retention_days() == 0 and retention.prune() is None
    changed = AuditEvent.objects.get(action="retention.changed")
    assert (changed.actor_name, changed.data) == ("admin", {"before": 30, "after": 0})
    assert not retention.set_retention(0, admin)


def test_it_verifies_from_the_command_line_and_exits_1_on_a_break(chain, capsys):
    call_command("verify_audit")
    assert "ok: 10 events, seq 1 to 10" in capsys.readouterr().out
    with trigger_disabled():
        AuditEvent.objects.filter(seq=3).update(action="call.approved")
    with pytest.raises(CommandError, match="broken at seq 3") as raised:
        call_command("verify_audit")
    assert raised.value.returncode == 1


def test_it_checks_an_exported_head_from_the_command_line(chain, capsys):
    call_command("verify_audit", expect_head=f"10:{chain[-1].hash}")
    assert "matches the exported head" in capsys.readouterr().out
    append(1)
    call_command("verify_audit", expect_head=f"10:{chain[-1].hash}")
    with pytest.raises(CommandError, match="broken at seq 10"):
        call_command("verify_audit", expect_head="10:" + "0" * 64)


def test_it_prunes_from_the_command_line(aged, settings, capsys):
    settings.AUDIT_RETENTION_DAYS = 30
    call_command("prune_audit")
    assert "Pruned 4 events" in capsys.readouterr().out
