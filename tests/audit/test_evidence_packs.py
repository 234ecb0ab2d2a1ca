"""Evidence packs: a period's audit events with the rules and servers at its start and end, verified whole with the
public key alone, from the command and from the audit page."""

import io
import json
import zipfile
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from approvals import roles
from approvals.actions import servers
from approvals.audit import checkpoints
from approvals.policy import rules
from tests.audit.exports import check, openssl_verifies
from tests.fixtures.people import make_user


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
