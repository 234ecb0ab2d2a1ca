import json

import pytest
from django.core.management import CommandError

from approvals.audit.models import AuditEvent
from approvals.policy.models import PolicyRule
from tests.commands.conftest import run


@pytest.fixture
def three_rules(shop, client_token):
    run("add_rule", "--action", "deny", "--tool", "shop_issue_*", "--name", "no refunds", "--message", "ask support")
    run(
        "add_rule",
        "--action",
        "ask",
        "--server",
        "Shop",
        "--client",
        "agent",
        "--conditions",
        '[{"path": "amount", "op": "gt", "value": 100}]',
        "--name",
        "big",
        "--approvals-needed",
        "2",
        "--approval-timeout",
        "120",
        "--separation-of-duties",
        "require",
    )
    run("add_rule", "--action", "allow", "--annotation", "readOnlyHint=true", "--name", "reads")
    return list(PolicyRule.objects.all())


def export(tmp_path, name="rules.json"):
    path = tmp_path / name
    path.write_text(run("export_rules"))
    return path


def rows():
    return [
        (str(r.uid), r.position, r.name, r.action, r.server_id, r.client_id, r.conditions, r.enabled, r.updated_at)
        + (r.approvals_needed, r.approval_timeout_seconds, r.separation_of_duties)
        for r in PolicyRule.objects.all()
    ]


def test_it_exports_every_rule_in_order_with_its_uid_and_names(three_rules):
    document = json.loads(run("export_rules"))
    assert document["version"] == 1
    assert [r["uid"] for r in document["rules"]] == [str(r.uid) for r in three_rules]
    assert document["rules"][1] == {
        "uid": str(three_rules[1].uid),
        "name": "big",
        "action": "ask",
        "applies_to": "tool",
        "server": "Shop",
        "tool_glob": "*",
        "client": "agent",
        "annotations": {},
        "conditions": [{"path": "amount", "op": "gt", "value": 100}],
        "message": "",
        "approvals_needed": 2,
        "approval_timeout_seconds": 120,
        "escalate_before_seconds": None,
        "separation_of_duties": "require",
        "slack_channel": "",
        "enabled": True,
    }


def test_it_changes_nothing_when_the_exported_file_is_imported_back_with_replace(three_rules, tmp_path):
    path = export(tmp_path)
    before, events = rows(), AuditEvent.objects.count()
    output = run("import_rules", str(path), "--replace")
    assert rows() == before
    assert "0 created, 0 changed, 0 moved, 0 deleted, 3 unchanged" in output
    added = AuditEvent.objects.filter(seq__gt=events)
    assert [e.action for e in added] == ["rule.imported"]
    assert added[0].data["unchanged"] == 3 and added[0].data["changes"] == []


def test_it_keeps_each_rules_identity_through_a_round_trip_into_an_empty_policy(three_rules, tmp_path):
    path = export(tmp_path)
    uids = [str(r.uid) for r in three_rules]
    PolicyRule.objects.all().delete()
    run("import_rules", str(path))
    assert [str(r.uid) for r in PolicyRule.objects.all()] == uids
    assert list(PolicyRule.objects.values_list("position", flat=True)) == [1, 2, 3]
    assert export(tmp_path, "again.json").read_text() == path.read_text()


def test_it_replaces_the_rules_with_exactly_the_files_in_its_order(three_rules, tmp_path):
    document = json.loads(export(tmp_path).read_text())
    reads, big = document["rules"][2], document["rules"][1]
    big["action"] = "deny"
    (tmp_path / "two.json").write_text(json.dumps({"version": 1, "rules": [reads, big]}))
    output = run("import_rules", str(tmp_path / "two.json"), "--replace")
    assert [(r.name, r.position, r.action) for r in PolicyRule.objects.all()] == [
        ("reads", 1, "allow"),
        ("big", 2, "deny"),
    ]
    assert "1 changed, 1 moved, 1 deleted" in output
    event = AuditEvent.objects.get(action="rule.imported")
    deleted = [c for c in event.data["changes"] if c["after"] is None]
    assert [c["before"]["name"] for c in deleted] == ["no refunds"]
    changed = [c for c in event.data["changes"] if c["before"] and c["after"] and c["after"]["name"] == "big"]
    assert changed[0]["before"]["action"] == "ask" and changed[0]["after"]["action"] == "deny"


def test_it_updates_by_uid_and_adds_new_rules_after_the_others_without_replace(three_rules, tmp_path):
    first = json.loads(export(tmp_path).read_text())["rules"][0]
    first["enabled"] = False
    new = {"uid": "0b7c2f57-8d0e-4a55-9f7e-1f6d3c1c9a10", "action": "deny", "tool_glob": "shop_wipe_*"}
    (tmp_path / "some.json").write_text(json.dumps({"version": 1, "rules": [new, first]}))
    run("import_rules", str(tmp_path / "some.json"))
    listed = [(r.name, r.tool_glob, r.enabled, r.position) for r in PolicyRule.objects.all()]
    assert listed == [
        ("no refunds", "shop_issue_*", False, 1),
        ("big", "*", True, 2),
        ("reads", "*", True, 3),
        ("", "shop_wipe_*", True, 4),
    ]


@pytest.mark.parametrize(
    "change, fault",
    [
        ({"server": "Nowhere"}, "rule 2 ({uid}) server: no server named 'Nowhere'"),
        ({"action": "maybe"}, "rule 2 ({uid}) action: action must be one of"),
        ({"conditions": [{"path": "a", "op": "bigger"}]}, "rule 2 ({uid}) conditions: condition 1 needs"),
        ({"enabled": "yes"}, "rule 2 ({uid}) enabled: must be bool"),
        ({"colour": "red"}, "rule 2 ({uid}) colour: is not a field of a rule"),
        ({"uid": "not-a-uuid"}, "rule 2 (not-a-uuid) uid: 'not-a-uuid' is not a UUID"),
        ({"approvals_needed": 0}, "rule 2 ({uid}) approvals_needed: the approvals needed must be a whole number"),
        ({"approvals_needed": True}, "rule 2 ({uid}) approvals_needed: the approvals needed must be a whole number"),
        ({"approval_timeout_seconds": "1h"}, "rule 2 ({uid}) approval_timeout_seconds: must be int or null"),
        ({"separation_of_duties": "maybe"}, "rule 2 ({uid}) separation_of_duties: separation of duties must be one"),
    ],
)
def test_it_names_the_rule_and_field_at_fault_and_changes_nothing(three_rules, tmp_path, change, fault):
    document = json.loads(export(tmp_path).read_text())
    uid = document["rules"][1]["uid"]
    document["rules"][1].update(change)
    document["rules"][0]["name"] = "renamed by the file"
    (tmp_path / "bad.json").write_text(json.dumps(document))
    before, events = rows(), AuditEvent.objects.count()
    with pytest.raises(CommandError) as refused:
        run("import_rules", str(tmp_path / "bad.json"), "--replace")
    assert fault.format(uid=uid) in str(refused.value)
    assert rows() == before and AuditEvent.objects.count() == events


def test_it_refuses_two_rules_with_one_uid(three_rules, tmp_path):
    document = json.loads(export(tmp_path).read_text())
    document["rules"][2]["uid"] = document["rules"][0]["uid"]
    (tmp_path / "twice.json").write_text(json.dumps(document))
    with pytest.raises(CommandError, match=r"rule 3 \(.+\) uid: the same uid as rule 1"):
        run("import_rules", str(tmp_path / "twice.json"))


def test_it_names_the_line_of_a_file_that_is_not_json(three_rules, tmp_path):
    (tmp_path / "broken.json").write_text('{"version": 1,\n "rules": [\n  {"uid": }\n]}')
    with pytest.raises(CommandError, match="line 3, column 11"):
        run("import_rules", str(tmp_path / "broken.json"))
    assert PolicyRule.objects.count() == 3


def test_it_says_when_the_file_cannot_be_read(db, tmp_path):
    with pytest.raises(CommandError, match="cannot read"):
        run("import_rules", str(tmp_path / "absent.json"))
