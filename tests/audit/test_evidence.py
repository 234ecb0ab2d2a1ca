"""Evidence an outsider can verify: signed checkpoints, exports that end with one, tools/verify_export.py
run with the public key alone, openssl on a checkpoint (evidence packs: test_evidence_packs.py)."""

import base64
import csv
import importlib
import importlib.util
import io
import json
import os
import subprocess
import sys
from types import SimpleNamespace

import pytest
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from django.core.management import call_command
from django.db import transaction
from django.urls import reverse

from approvals import roles, tasks
from approvals.audit import chain, checkpoints, encoding
from approvals.audit.models import AuditCheckpoint, AuditEvent, AuditHead
from approvals.audit.public_chain import public_chain_value
from approvals.audit_log import export
from tests.audit.conftest import trigger_disabled
from tests.audit.exports import ODD_DATA, VERIFIER, check, events, openssl_verifies, verify_export
from tests.fixtures.people import make_user
from tests.fixtures.tools import require

MANY = 10_000


@pytest.fixture(scope="module")
def exported(django_db_setup, django_db_blocker, tmp_path_factory):
    """Ten thousand events exported as CSV and JSON Lines, with the public key; the database left as it was."""
    folder = tmp_path_factory.mktemp("exports")
    with django_db_blocker.unblock(), transaction.atomic():
        events(MANY)
        checkpoint = checkpoints.take()
        (folder / "audit.csv").write_bytes("".join(export.export_chunks(AuditEvent.objects.all(), "csv")).encode())
        (folder / "audit.jsonl").write_bytes("".join(export.export_chunks(AuditEvent.objects.all(), "jsonl")).encode())
        (folder / "key.pem").write_text(checkpoints.public_key_pem())
        checkpoint_fields = checkpoints.as_dict(checkpoint)
        transaction.set_rollback(True)
    return {"folder": folder, "key": folder / "key.pem", "checkpoint": checkpoint_fields}


def tampered(exported, name, change):
    lines = (exported["folder"] / name).read_bytes().split(b"\n")
    target = exported["folder"] / f"changed-{name}"
    target.write_bytes(b"\n".join(change(lines)))
    return check(target, exported["key"])


def test_it_verifies_an_export_of_ten_thousand_events_with_the_public_key_alone(exported):
    # A process without Django (importing it fails), the console's code, AUDIT_KEY or a database.
    environment = {name: value for name, value in os.environ.items() if name not in ("AUDIT_KEY", "DATABASE_URL")}
    environment.pop("DJANGO_SETTINGS_MODULE", None)
    run = (
        "import runpy, sys; sys.modules['django'] = None; sys.modules['approvals'] = None;"
        f"sys.argv = sys.argv[1:]; runpy.run_path({str(VERIFIER)!r}, run_name='__main__')"
    )
    for name in ("audit.csv", "audit.jsonl"):
        done = subprocess.run(
            [
                sys.executable,
                "-c",
                run,
                "verify_export",
                str(exported["folder"] / name),
                "--public-key",
                str(exported["key"]),
            ],
            capture_output=True,
            text=True,
            cwd=exported["folder"],
            env=environment,
            timeout=60,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert done.stdout.startswith("intact") and f"{MANY} events, seq 1 to {MANY}" in done.stdout


def test_it_names_an_event_with_one_byte_changed(exported):
    def change_one_byte(lines):
        line = lines[4999]
        lines[4999] = line.replace(b"operator 4", b"operator 5")
        assert lines[4999] != line
        return lines

    status, said = tampered(exported, "audit.jsonl", change_one_byte)
    assert status == 1 and "event seq 5000 was changed" in said


def test_it_names_an_event_changed_in_a_csv_export(exported):
    def rename(lines):
        lines[1234] = lines[1234].replace(b"operator ", b"Operator ", 1)
        return lines

    status, said = tampered(exported, "audit.csv", rename)
    assert status == 1 and "event seq 1234 was changed" in said


def test_it_names_a_deleted_event(exported):
    status, said = tampered(exported, "audit.jsonl", lambda lines: lines[:6999] + lines[7000:])
    assert status == 1 and "event seq 7000 is missing" in said


def test_it_names_the_last_event_deleted_before_its_checkpoint(exported):
    status, said = tampered(exported, "audit.jsonl", lambda lines: lines[: MANY - 1] + lines[MANY:])
    assert status == 1 and f"event seq {MANY} is missing" in said


def test_it_names_two_events_swapped(exported):
    def swap(lines):
        lines[2999], lines[3000] = lines[3000], lines[2999]
        return lines

    status, said = tampered(exported, "audit.jsonl", swap)
    assert status == 1 and "event seq 3001 stands where seq 3000 belongs" in said


def test_it_refuses_a_checkpoint_not_signed_with_the_key(exported, tmp_path):
    def sign_another_head(lines):
        ending = json.loads(lines[-2])
        ending["checkpoint"]["signed"] = ending["checkpoint"]["signed"].replace(f"seq={MANY}", f"seq={MANY - 1}")
        lines[-2] = json.dumps(ending).encode()
        return lines

    status, said = tampered(exported, "audit.jsonl", sign_another_head)
    assert status == 1 and "signature of the checkpoint does not verify" in said
    other = tmp_path / "other.pem"
    another = checkpoints.private_key("another console").public_key()
    other.write_bytes(another.public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo))
    assert check(exported["folder"] / "audit.csv", other)[0] == 1


def test_it_signs_checkpoints_that_openssl_verifies(exported, tmp_path):
    require("openssl")
    checkpoint = exported["checkpoint"]
    (tmp_path / "checkpoint.txt").write_text(checkpoint["signed"])
    (tmp_path / "checkpoint.sig").write_bytes(base64.b64decode(checkpoint["signature"]))
    assert openssl_verifies(exported["key"], tmp_path / "checkpoint.txt", tmp_path / "checkpoint.sig")
    (tmp_path / "checkpoint.txt").write_text(checkpoint["signed"].replace("seq=", "seq=1"))
    assert not openssl_verifies(exported["key"], tmp_path / "checkpoint.txt", tmp_path / "checkpoint.sig")


def test_it_encodes_events_as_the_chain_does(db):
    recorded = [chain.record("call.denied", chain.SYSTEM, data=data) for data in ODD_DATA]
    lines = "".join(export.export_chunks(AuditEvent.objects.all(), "jsonl")).split("\n")
    for event, line in zip(recorded, lines, strict=False):
        assert verify_export.canonical(json.loads(line)) == encoding.encode_event(encoding.hashed_row(event))


def test_it_checkpoints_the_head_once_and_refuses_a_public_chain_recomputed_over_a_change(db):
    made = events(5)
    first = checkpoints.take()
    assert (first.seq, first.public_hash) == (5, made[-1].public_hash)
    assert checkpoints.take() == first
    more = events(3)
    # What whoever holds the database can do: change a signed event and recompute the unkeyed chain after it.
    with trigger_disabled():
        value = made[1].public_hash
        for event in made[2:] + more:
            event.data = {"changed": True} if event is made[2] else event.data
            value = public_chain_value(value, encoding.encode_event(encoding.hashed_row(event)))
            AuditEvent.objects.filter(seq=event.seq).update(data=event.data, public_hash=value)
        AuditHead.objects.update(public_hash=value)
    with pytest.raises(checkpoints.Refused, match="at seq 6"):
        checkpoints.take()
    assert AuditCheckpoint.objects.count() == 1


def test_it_serves_and_prints_the_public_key(client, db, capsys):
    client.force_login(make_user("audrey", roles.AUDITOR))
    served = client.get(reverse("audit_public_key"))
    call_command("audit_public_key")
    assert served.status_code == 200 and served.content.decode() == capsys.readouterr().out
    assert served.content.startswith(b"-----BEGIN PUBLIC KEY-----")


def test_it_schedules_checkpoints_every_audit_checkpoint_seconds(settings):
    assert settings.CELERY_BEAT_SCHEDULE["checkpoint-audit"] == {
        "task": "approvals.tasks.checkpoint_audit",
        "schedule": 300.0,
    }


def test_it_names_servers_tools_and_clients_beside_their_ids_in_the_csv(db, client_token, refund_tool):
    chain.record("call.denied", chain.SYSTEM, server=refund_tool.server, tool=refund_tool, token=client_token)
    rows = list(csv.reader(io.StringIO("".join(export.export_chunks(AuditEvent.objects.all(), "csv")))))
    row = dict(zip(rows[0], [r for r in rows[1:] if r[0].isdigit() and r[5] == "call.denied"][0], strict=True))
    assert (row["server_name"], row["tool_name"], row["client_name"]) == (
        refund_tool.server.name,
        refund_tool.exposed_name,
        client_token.name,
    )


def test_it_fills_in_the_public_chain_of_events_written_before_it(db):
    from django.apps import apps
    from django.db import connection

    filling = importlib.import_module("approvals.migrations.0006_audit_checkpoints")
    written = events(5)
    with trigger_disabled():
        AuditEvent.objects.update(public_hash="")
        AuditHead.objects.update(public_hash=AuditHead.GENESIS)
    # What the function asks of a schema editor; SQLite's refuses to open inside the test's transaction.
    editor = SimpleNamespace(connection=connection, execute=lambda sql: connection.cursor().execute(sql))
    filling.chain_publicly(apps, editor)
    assert list(AuditEvent.objects.values_list("public_hash", flat=True)) == [e.public_hash for e in written]
    assert AuditHead.objects.get().public_hash == written[-1].public_hash


def test_it_takes_checkpoints_as_a_periodic_task(db):
    assert tasks.checkpoint_audit() is None
    events(2)
    assert tasks.checkpoint_audit() == 2 and AuditCheckpoint.objects.get().seq == 2


def test_it_says_which_events_no_checkpoint_covers(db, tmp_path):
    events(3)
    checkpoints.take()
    events(2)
    (tmp_path / "audit.jsonl").write_text("".join(export.export_chunks(AuditEvent.objects.all(), "jsonl")))
    (tmp_path / "key.pem").write_text(checkpoints.public_key_pem())
    status, said = check(tmp_path / "audit.jsonl", tmp_path / "key.pem")
    assert status == 1 and "events seq 4 to 5 are not covered by the checkpoint, which signs seq 3" in said
