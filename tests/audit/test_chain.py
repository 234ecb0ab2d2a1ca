"""The hash chain: how an event is hashed, and verification finding what was changed or removed."""

import datetime
import hashlib
import hmac
import random
from itertools import pairwise

import pytest
from django.core.cache import caches
from django.db import DatabaseError, connection, transaction

from approvals.audit import chain as audit_chain
from approvals.audit import encoding, verify, witness
from approvals.audit.models import AuditEvent, AuditHead
from approvals.audit.public_chain import public_chain_value
from approvals.protocol.canonical import canonical_json
from tests.audit.conftest import append, cut_the_end, trigger_disabled


def fields_of(event):
    return {name: getattr(event, name) for name in encoding.HASHED} | {"at": event.at.isoformat()}


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
        assert encoding.encode_event(row) == canonical_json(
            dict(zip(encoding.HASHED, row, strict=True)) | {"at": row[1].isoformat()}
        )


def test_it_hashes_data_as_the_database_gives_it_back(db):
    event = audit_chain.record(
        "server.changed", audit_chain.SYSTEM, data={"big": 1e20, "zero": -0.0, "small": 1.5e-7, "tuple": (1, 2)}
    )
    stored = AuditEvent.objects.get(seq=event.seq)
    assert stored.data == {"big": 10**20, "zero": 0.0, "small": 1.5e-7, "tuple": [1, 2]}
    assert encoding.event_hash(encoding.hashed_row(stored)) == stored.hash


def test_it_refuses_data_that_has_no_json_form(db):
    with pytest.raises(ValueError):
        audit_chain.record("server.changed", audit_chain.SYSTEM, data={"amount": float("nan")})


def test_it_links_each_event_to_the_one_before(chain):
    assert [e.seq for e in chain] == list(range(1, 11))
    assert chain[0].prev_hash == AuditHead.GENESIS
    assert all(later.prev_hash == earlier.hash for earlier, later in pairwise(chain))
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
    forged.hash = encoding.event_hash(encoding.hashed_row(forged))
    # Its public chain value recomputed too, as anyone may: the keyed link to the next event still breaks.
    forged.public_hash = public_chain_value(chain[2].public_hash, encoding.encode_event(encoding.hashed_row(forged)))
    with trigger_disabled():
        AuditEvent.objects.filter(seq=4).update(
            actor_name=forged.actor_name, hash=forged.hash, public_hash=forged.public_hash
        )
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
        AuditHead.objects.update(anchor_seq=3, anchor_hash=chain[2].hash, anchor_public_hash=chain[2].public_hash)
    verdict = verify.verify_chain()
    assert (verdict.ok, verdict.broken_seq) == (False, 3)
    assert "audit.pruned" in verdict.problem


def test_it_checks_a_head_written_by_an_earlier_export(chain):
    assert verify.verify_chain(expect=(7, chain[6].hash)).ok
    assert verify.verify_chain(expect=(7, "f" * 64)).broken_seq == 7
    assert "shorter" in verify.verify_chain(expect=(11, chain[6].hash)).problem


def test_it_refuses_to_append_when_the_head_row_is_gone(chain):
    with trigger_disabled():
        AuditHead.objects.all().delete()
    with pytest.raises(audit_chain.MissingHead, match="no head row"), transaction.atomic():
        audit_chain.record("server.changed", audit_chain.SYSTEM)
    assert AuditEvent.objects.count() == 10 and not AuditHead.objects.exists()


def test_it_links_events_with_an_hmac_under_the_audit_key(chain, settings):
    assert (
        chain[0].hash
        == hmac.digest(
            settings.AUDIT_KEY.encode(), encoding.encode_event(encoding.hashed_row(chain[0])), "sha256"
        ).hex()
    )


def test_it_finds_an_edit_rehashed_without_the_key_at_the_edited_event(chain):
    forged = AuditEvent.objects.get(seq=4)
    forged.actor_name = "someone else"
    # What a database login can compute: the plain SHA-256 of the event's canonical bytes.
    forged.hash = hashlib.sha256(encoding.encode_event(encoding.hashed_row(forged))).hexdigest()
    with trigger_disabled():
        AuditEvent.objects.filter(seq=4).update(actor_name=forged.actor_name, hash=forged.hash)
    verdict = verify.verify_chain()
    assert (verdict.ok, verdict.broken_seq) == (False, 4)
    assert verdict.found == forged.hash


def test_it_says_the_key_may_be_wrong_when_the_first_event_fails(chain, settings):
    settings.AUDIT_KEY = "not the key the chain was written with"
    verdict = verify.verify_chain()
    assert (verdict.ok, verdict.broken_seq) == (False, 1)
    assert "AUDIT_KEY is not the key it was written with" in verdict.problem


def test_it_finds_the_newest_events_cut_off_with_the_head_set_back(chain):
    assert verify.verify_chain().ok
    cut_the_end(chain, keep=7)
    verdict = verify.verify_chain()
    assert (verdict.ok, verdict.broken_seq) == (False, 8)
    assert "earlier verification" in verdict.problem
    assert (verdict.expected, verdict.found) == ("seq 10 (verified before)", "head at seq 7")


def test_it_finds_a_witnessed_event_replaced_by_a_new_tail(chain):
    assert verify.verify_chain().ok
    cut_the_end(chain, keep=7)
    # Appended anew by the console, so every link holds up to a head as high as the witnessed one.
    append(3)
    verdict = verify.verify_chain()
    assert (verdict.ok, verdict.broken_seq) == (False, 10)
    assert "replaced" in verdict.problem and verdict.expected == chain[9].hash


def test_it_keeps_the_latest_verified_head_as_the_witness(chain):
    assert witness.read() is None
    assert verify.verify_chain().ok
    assert witness.read() == (10, chain[-1].hash)
    witness.raise_to(3, chain[2].hash)
    assert witness.read() == (10, chain[-1].hash)


def test_it_refuses_a_witness_not_signed_with_the_key(chain, settings):
    assert verify.verify_chain().ok
    caches["audit_witness"].set(witness.key(), (12, "f" * 64, "0" * 64))
    verdict = verify.verify_chain()
    assert not verdict.ok and "witness" in verdict.problem


@pytest.mark.postgres
def test_it_refuses_updates_and_deletes_on_postgresql(chain):
    for statement in ("UPDATE approvals_auditevent SET actor_name = 'x'", "DELETE FROM approvals_auditevent"):
        with pytest.raises(DatabaseError, match="append-only"), transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(statement)
    assert AuditEvent.objects.count() == 10 and not AuditEvent.objects.filter(actor_name="x").exists()


@pytest.mark.postgres
def test_it_lets_only_a_prune_delete_on_postgresql(transactional_db):
    first = append(3)[0]
    with trigger_disabled():
        AuditEvent.objects.filter(seq=1).update(at=first.at - datetime.timedelta(days=2))
    with transaction.atomic(), connection.cursor() as cursor:
        # As pruning does: the anchor first, onto an old event, then the events up to it.
        cursor.execute("UPDATE approvals_audithead SET anchor_seq = 1, anchor_hash = %s", [first.hash])
        cursor.execute("SELECT set_config('approvals.audit_prune', 'on', true)")
        cursor.execute("DELETE FROM approvals_auditevent WHERE seq = 1")
    assert AuditEvent.objects.count() == 2
    # The setting ended with its transaction.
    with pytest.raises(DatabaseError, match="append-only"):
        AuditEvent.objects.filter(seq=2).delete()


@pytest.mark.parametrize("count", [1, 3, 60])
def test_it_appends_a_batch_in_one_insert_moving_the_head_too_on_postgresql_a_large_one_as_one_array_per_column(
    db, count
):
    statements = []

    def noting(execute, sql, params, many, context):
        statements.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(noting), audit_chain.batch():
        for n in range(count):
            audit_chain.record("call.received", audit_chain.SYSTEM, data={"n": n, "text": "naïve ✓" * n, "none": None})

    events, head = (connection.ops.quote_name(model._meta.db_table) for model in (AuditEvent, AuditHead))
    columns = len([f for f in AuditEvent._meta.concrete_fields if not f.primary_key])
    inserts = [("unnest(" in sql, len(params)) for sql, params in statements if f"INSERT INTO {events}" in sql]
    moves = [sql for sql, _ in statements if f"UPDATE {head}" in sql]
    assert len(inserts) == 1 and len(moves) == 1
    arrays, parameters = inserts[0]
    if connection.vendor == "postgresql":
        # The head's lock, then one statement: the new tip (3 parameters) and the rows, or past what psycopg parses
        # once, one array per column.
        assert len(statements) == 2
        assert (arrays, parameters) == ((True, 3 + columns) if count == 60 else (False, 3 + count * columns))
    else:
        assert (arrays, parameters) == (False, count * columns)
    assert AuditHead.objects.get().seq == AuditEvent.objects.order_by("-seq").values_list("seq", flat=True)[0]
    assert [e.data["n"] for e in AuditEvent.objects.filter(action="call.received").order_by("seq")] == list(
        range(count)
    )
    assert verify.verify_chain().ok
