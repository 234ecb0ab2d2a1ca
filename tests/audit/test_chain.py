"""The hash chain: how an event is hashed, and verification finding what was changed or removed."""

import datetime
import random

import pytest
from django.db import DatabaseError, connection, transaction

from approvals.audit import chain as audit_chain
from approvals.audit import verify
from approvals.models import AuditEvent, AuditHead
from approvals.protocol.canonical import canonical_json
from tests.audit.conftest import append, trigger_disabled


def fields_of(event):
    return {name: getattr(event, name) for name in audit_chain.HASHED} | {"at": event.at.isoformat()}


def test_it_hashes_the_same_bytes_as_the_canonical_encoding():
    rng = random.Random(7)
    for n in range(200):
        data = {
            "arguments": {
                "ü": "naïve ✓",
                "n": rng.randint(-(10**20), 10**20),
                "f": rng.random() * 10 ** rng.randint(-8, 8),
            },
            "list": [None, True, False, 'quote " and \\ and \n', 1.0, -0.5],
            "nested": {"z": {"a": []}, "a": {}},
        }
        row = (
            n + 1,
            datetime.datetime(2026, 1, 2, 3, 4, 5, n, tzinfo=datetime.UTC),
            "user",
            n or None,
            "ann",
            "call.approved",
            "",
            None,
            3,
            4,
            None,
            audit_chain.stored_form(data),
            "ab" * 32,
        )
        assert audit_chain.encode_event(row) == canonical_json(
            dict(zip(audit_chain.HASHED, row)) | {"at": row[1].isoformat()}
        )


def test_it_hashes_data_as_the_database_gives_it_back(db):
    event = audit_chain.record(
        "server.changed", audit_chain.SYSTEM, data={"big": 1e20, "zero": -0.0, "small": 1.5e-7, "tuple": (1, 2)}
    )
    stored = AuditEvent.objects.get(pk=event.pk)
    assert stored.data == {"big": 10**20, "zero": 0.0, "small": 1.5e-7, "tuple": [1, 2]}
    assert audit_chain.event_hash(audit_chain.hashed_row(stored)) == stored.hash


def test_it_refuses_data_that_has_no_json_form(db):
    with pytest.raises(ValueError):
        audit_chain.record("server.changed", audit_chain.SYSTEM, data={"amount": float("nan")})


def test_it_links_each_event_to_the_one_before(chain):
    assert [e.seq for e in chain] == list(range(1, 11))
    assert chain[0].prev_hash == AuditHead.GENESIS
    assert all(later.prev_hash == earlier.hash for earlier, later in zip(chain, chain[1:]))
    assert AuditHead.objects.get().seq == 10 and AuditHead.objects.get().hash == chain[-1].hash


def test_it_verifies_an_intact_chain(chain):
    verdict = verify.verify_chain()
    assert verdict.ok, verdict.summary()
    assert (verdict.checked, verdict.first_seq, verdict.last_seq) == (10, 1, 10)


def test_it_verifies_an_empty_log(db):
    assert verify.verify_chain().ok


def test_it_finds_an_edited_event_at_its_sequence(chain):
    with trigger_disabled():
        AuditEvent.objects.filter(seq=4).update(data={"n": 99})
    verdict = verify.verify_chain()
    assert not verdict.ok
    assert verdict.broken_seq == 4 and "changed" in verdict.problem
    assert verdict.found == chain[3].hash and verdict.expected != chain[3].hash


def test_it_finds_an_edit_whose_hash_was_recomputed_at_the_next_link(chain):
    forged = AuditEvent.objects.get(seq=4)
    forged.actor_name = "someone else"
    forged.hash = audit_chain.event_hash(audit_chain.hashed_row(forged))
    with trigger_disabled():
        AuditEvent.objects.filter(seq=4).update(actor_name=forged.actor_name, hash=forged.hash)
    verdict = verify.verify_chain()
    assert (verdict.ok, verdict.broken_seq) == (False, 5)
    assert verdict.expected == forged.hash and verdict.found == chain[3].hash


def test_it_finds_a_deleted_event_at_its_sequence(chain):
    with trigger_disabled():
        AuditEvent.objects.filter(seq=6).delete()
    verdict = verify.verify_chain()
    assert (verdict.ok, verdict.broken_seq) == (False, 6)
    assert "missing" in verdict.problem and verdict.found == "seq 7"


def test_it_finds_events_deleted_from_the_end(chain):
    with trigger_disabled():
        AuditEvent.objects.filter(seq__gte=9).delete()
    verdict = verify.verify_chain()
    assert (verdict.ok, verdict.broken_seq) == (False, 9)


def test_it_finds_a_prefix_deleted_behind_a_forged_anchor(chain):
    with trigger_disabled():
        AuditEvent.objects.filter(seq__lte=3).delete()
    AuditHead.objects.update(anchor_seq=3, anchor_hash=chain[2].hash)
    verdict = verify.verify_chain()
    assert (verdict.ok, verdict.broken_seq) == (False, 3)
    assert "audit.pruned" in verdict.problem


def test_it_checks_a_head_written_by_an_earlier_export(chain):
    assert verify.verify_chain(expect=(7, chain[6].hash)).ok
    assert verify.verify_chain(expect=(7, "f" * 64)).broken_seq == 7
    assert "shorter" in verify.verify_chain(expect=(11, chain[6].hash)).problem


def test_it_continues_the_chain_when_the_head_row_is_gone(chain):
    AuditHead.objects.all().delete()
    event = audit_chain.record("server.changed", audit_chain.SYSTEM)
    assert (event.seq, event.prev_hash) == (11, chain[-1].hash)
    assert verify.verify_chain().ok


@pytest.mark.postgres
def test_it_refuses_updates_and_deletes_on_postgresql(chain):
    for statement in ("UPDATE approvals_auditevent SET actor_name = 'x'", "DELETE FROM approvals_auditevent"):
        with pytest.raises(DatabaseError, match="append-only"), transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(statement)
    assert AuditEvent.objects.count() == 10 and not AuditEvent.objects.filter(actor_name="x").exists()


@pytest.mark.postgres
def test_it_lets_only_a_prune_delete_on_postgresql(transactional_db):
    append(3)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT set_config('approvals.audit_prune', 'on', true)")
        cursor.execute("DELETE FROM approvals_auditevent WHERE seq = 1")
    assert AuditEvent.objects.count() == 2
    # The setting ended with its transaction.
    with pytest.raises(DatabaseError, match="append-only"):
        AuditEvent.objects.filter(seq=2).delete()
