"""The registry of audit actions: the only actions the log records, every one offered by the audit page's filter
and listed by the report, none that the code records missing from it."""

import ast
import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.urls import reverse
from django.utils import timezone

import approvals
from approvals.audit import chain
from approvals.audit.actions import ACTIONS, UnregisteredAction
from approvals.audit.models import AuditEvent
from approvals.audit_log import filters, report

ACTION_SHAPE = re.compile(r"^[a-z_]+\.[a-z_]+$")
# The functions that take an audit action among their arguments and record it: chain.record and those that call
# it with an action given to them (policy/rules, webhooks/endpoints, catalog/routes, gateway/resources_prompts,
# admin), and the gateway's listings, which name the action each records.
RECORDERS = {"record", "record_use", "record_unknown", "audited", "prepared", "record_save", "Listing"}


def callee(node: ast.Call) -> str:
    return node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")


def strings(nodes) -> list[str]:
    return [n.value for n in nodes if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def recorded_in(tree) -> set[str]:
    """The literal actions a module records: arguments of the recorders, keys of the `audit` a transition records."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and callee(node) in RECORDERS:
            found += strings(node.args)
        if isinstance(node, ast.Call):
            found += [
                k
                for kw in node.keywords
                if kw.arg == "audit" and isinstance(kw.value, ast.Dict)
                for k in strings(kw.value.keys)
            ]
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = {t.id for t in targets if isinstance(t, ast.Name)} | {
                t.value.id for t in targets if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name)
            }
            if "audit" in names:
                found += strings([t.slice for t in targets if isinstance(t, ast.Subscript)])
                if isinstance(node.value, ast.Dict):
                    found += strings(node.value.keys)
    return {value for value in found if ACTION_SHAPE.match(value)}


def recorded_by_the_code() -> dict[str, set[str]]:
    package = Path(approvals.__file__).parent
    by_module = {}
    for path in package.rglob("*.py"):
        if "migrations" not in path.parts:
            by_module[str(path.relative_to(package))] = recorded_in(ast.parse(path.read_text(), str(path)))
    return by_module


def test_it_registers_every_action_the_code_records():
    by_module = recorded_by_the_code()
    recorded = set().union(*by_module.values())
    # The scan still finds the code's actions: were the recorders renamed, it would find none and pass.
    assert len(recorded) > 60 and "call.claimed" in recorded and "upstream_oauth.refreshed" in recorded
    missing = {f"{action} ({module})" for module, actions in by_module.items() for action in actions - ACTIONS.keys()}
    assert not missing, "recorded but not registered in approvals/audit/actions.py: " + ", ".join(sorted(missing))


def test_it_describes_every_registered_action_in_a_line():
    assert all(ACTION_SHAPE.match(action) for action in ACTIONS)
    assert all(description and "\n" not in description for description in ACTIONS.values())


@pytest.mark.django_db
def test_it_refuses_an_unregistered_action_at_once_and_records_nothing():
    before = AuditEvent.objects.count()
    with pytest.raises(UnregisteredAction, match=r"'call.teleported' is not registered.*approvals/audit/actions.py"):
        chain.record("call.teleported", chain.SYSTEM, data={})
    with pytest.raises(UnregisteredAction), chain.batch():
        chain.record("call.received", chain.SYSTEM, data={})
        chain.record("call.teleported", chain.SYSTEM, data={})
    assert AuditEvent.objects.count() == before


@pytest.mark.django_db
def test_it_refuses_an_unregistered_action_on_the_append_path_too():
    event = chain.record("call.received", chain.SYSTEM, data={})
    event.action = "call.teleported"
    with pytest.raises(UnregisteredAction):
        chain.append([event])


def test_it_offers_every_registered_action_in_the_audit_filter():
    offered = [value for value, _ in filters.AuditFilter().fields["action"].choices if value]
    assert offered == list(ACTIONS)
    assert {"call.claimed", "call.escalated", "audit.witness_reset", "upstream_oauth.authorized"} <= set(offered)


def test_it_lists_every_registered_action_in_the_report_with_its_count(login):
    chain.record("call.claimed", chain.SYSTEM, data={})
    now = timezone.now()
    built = report.build(now - timedelta(hours=1), now + timedelta(hours=1))
    listed = {row["action"]: row for row in built.actions}
    assert list(listed) == list(ACTIONS)
    assert listed["call.claimed"]["count"] == 1 and listed["call.escalated"]["count"] == 0
    assert listed["call.claimed"]["description"] == ACTIONS["call.claimed"]
    assert {"section": "actions", **listed["call.claimed"]} in list(report.csv_rows(built))

    page = login("auditor").get(reverse("audit_report")).content.decode()
    assert all(f"?action={action}" in page for action in ACTIONS)
