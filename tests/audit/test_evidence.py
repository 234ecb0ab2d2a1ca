"""Evidence an outsider can verify: signed checkpoints, exports that end with one, tools/verify_export.py
run with the public key alone, openssl on a checkpoint, and evidence packs checked whole."""

import base64
import csv
import importlib
import importlib.util
import io
import json
import os
import subprocess
import sys
import zipfile
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace

import pytest
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from django.core.management import call_command
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from approvals import roles, tasks
from approvals.actions import servers
from approvals.audit import chain, checkpoints, encoding
from approvals.audit.models import AuditCheckpoint, AuditEvent, AuditHead
from approvals.audit.public_chain import public_chain_value
from approvals.audit_log import export
from approvals.policy import rules
from tests.audit.conftest import trigger_disabled
from tests.fixtures.people import make_user
from tests.fixtures.tools import require

ROOT = Path(__file__).resolve().parents[2]
VERIFIER = ROOT / "tools" / "verify_export.py"
MANY = 10_000

spec = importlib.util.spec_from_file_location("verify_export", VERIFIER)
verify_export = importlib.util.module_from_spec(spec)
spec.loader.exec_module(verify_export)

# Values whose canonical bytes are easy to get wrong: non-ASCII, a line separator, quotes, floats, big integers.
ODD_DATA = [
    {"reason": 'Zoë said "no"\u2028twice', "n": -0.5, "big": 10**20, "nested": {"b": [1, 2.25], "a": None}},
    {"text": "tab\there, cr\rthere", "ok": True, "list": [], "empty": {}},
]


def events(count):
    made = []
    for start in range(0, count, 1000):
        batch = [
            chain.Event(
                at=timezone.now(),
                actor_type="user",
                actor_id=n % 7,
                actor_name=("=cmd" if n % 97 == 0 else "\rcarriage" if n % 89 == 0 else f"operator {n % 5}"),
                action="call.denied",
                request_id=f"req-{n}",
                call_id=n,
                server_id=n % 3 or None,
                tool_id=None,
                token_id=n % 11,
                data=chain.stored_form(ODD_DATA[n % 2] | {"n": n}),
            )
            for n in range(start, min(start + 1000, count))
        ]
        chain.append(batch)
        made += batch
    return made


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


def check(path, key):
    """verify_export's exit status and what it printed, in this process."""
    out = io.StringIO()
    saved, sys.stdout = sys.stdout, out
    try:
        status = verify_export.main([str(path), "--public-key", str(key)])
    finally:
        sys.stdout = saved
    return status, out.getvalue()


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


def openssl_verifies(key, message, signature) -> bool:
    command = ["openssl", "pkeyutl", "-verify", "-pubin", "-inkey", str(key), "-rawin", "-in", str(message)]
    done = subprocess.run([*command, "-sigfile", str(signature)], capture_output=True, text=True, timeout=30)
    return done.returncode == 0 and "Signature Verified Successfully" in done.stdout


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


@pytest.fixture
def period(db):
    """A server and a rule before; in the period a rule added and the server disabled; after it, another rule."""
    records = servers.add_server(
        name="Records", transport="http", url="https://records.example/mcp", schedule_sync=False
    )
    rules.create_rule(rules.RuleRequest(action="ask", name="ask for everything"))
    since = timezone.now()
    rules.create_rule(rules.RuleRequest(action="deny", name="no deletes", tool_glob="*_delete", position=1))
    servers.update_server(records, enabled=False)
    until = timezone.now() + timedelta(microseconds=1)
    servers.add_server(name="Later", transport="http", url="https://later.example/mcp", schedule_sync=False)
    rules.create_rule(rules.RuleRequest(action="allow", name="after the period"))
    return since, until


def test_it_packs_a_period_with_the_rules_and_servers_at_its_start_and_end_and_verifies_it_whole(period, tmp_path):
    since, until = period
    pack = tmp_path / "evidence.zip"
    call_command("export_evidence", "--since", since.isoformat(), "--until", until.isoformat(), str(pack))
    (tmp_path / "key.pem").write_text(checkpoints.public_key_pem())

    with zipfile.ZipFile(pack) as opened:
        start, end = (json.loads(opened.read(f"state-at-{when}.json")) for when in ("start", "end"))
        assert json.loads(opened.read("verification.json"))["ok"]
        assert opened.read("public-key.pem").decode() == checkpoints.public_key_pem()
    assert [rule["name"] for rule in start["rules"]] == ["ask for everything"]
    assert [rule["name"] for rule in end["rules"]] == ["no deletes", "ask for everything"]
    assert [(server["name"], server["enabled"]) for server in start["servers"]] == [("Records", True)]
    assert [(server["name"], server["enabled"]) for server in end["servers"]] == [("Records", False)]

    status, said = check(pack, tmp_path / "key.pem")
    assert status == 0 and said.startswith("intact"), said
    with zipfile.ZipFile(pack) as opened:
        opened.extractall(tmp_path, ["checkpoint.txt", "checkpoint.sig"])
    assert openssl_verifies(tmp_path / "key.pem", tmp_path / "checkpoint.txt", tmp_path / "checkpoint.sig")

    changed = tmp_path / "changed.zip"
    with zipfile.ZipFile(pack) as source, zipfile.ZipFile(changed, "w") as target:
        for item in source.infolist():
            content = source.read(item)
            if item.filename == "state-at-end.json":
                content = content.replace(b'"enabled": false', b'"enabled": true')
            target.writestr(item, content)
    status, said = check(changed, tmp_path / "key.pem")
    assert status == 1 and "state-at-end.json was changed" in said


def test_it_makes_an_evidence_pack_from_the_audit_page(period, client):
    since, until = period
    auditor = make_user("audrey", roles.AUDITOR)
    client.force_login(auditor)
    answer = client.post(
        reverse("audit_evidence"),
        {"pack-since": since.strftime("%Y-%m-%dT%H:%M:%S.%f"), "pack-until": until.strftime("%Y-%m-%dT%H:%M:%S.%f")},
    )
    assert answer.status_code == 200 and answer["Content-Type"] == "application/zip"
    with zipfile.ZipFile(io.BytesIO(b"".join(answer.streaming_content))) as opened:
        assert json.loads(opened.read("manifest.json"))["first_seq"] > 1
    empty = client.post(reverse("audit_evidence"), {"pack-since": "2001-01-01T00:00", "pack-until": "2001-01-02T00:00"})
    assert empty.status_code == 302


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
