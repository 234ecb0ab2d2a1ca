"""Rule files: every rule in order as JSON, to export, to keep in version control, and to import.

A file's rules are matched to the console's by uid. Every rule and field at fault is reported
at once, and the import applies all of it in one transaction with one audit event, or nothing.
"""

import json
import uuid
from dataclasses import dataclass, field

from django.db import transaction

from approvals.audit import chain
from approvals.audit.chain import SYSTEM, Actor
from approvals.policy.models import PolicyRule
from approvals.policy.rules import (
    FILE_FIELDS,
    RuleError,
    RuleRequest,
    assign,
    checked,
    locked_rules,
    place,
    problems,
    serialize,
)

FILE_VERSION = 1
FILE_TYPES = {
    "uid": (str,),
    "name": (str,),
    "action": (str,),
    "applies_to": (str,),
    "server": (str, type(None)),
    "tool_glob": (str,),
    "client": (str, type(None)),
    "annotations": (dict,),
    "conditions": (list,),
    "message": (str,),
    "approvals_needed": (int,),
    "approval_timeout_seconds": (int, type(None)),
    "escalate_before_seconds": (int, type(None)),
    "separation_of_duties": (str,),
    "slack_channel": (str,),
    "enabled": (bool,),
}


@dataclass
class ImportResult:
    created: int = 0
    changed: int = 0
    moved: int = 0
    deleted: int = 0
    unchanged: int = 0
    changes: list = field(default_factory=list)

    def counts(self) -> dict:
        return {k: getattr(self, k) for k in ("created", "changed", "moved", "deleted", "unchanged")}


def export_rules() -> dict:
    """Every rule in order, as a rule file holds them."""
    listed = PolicyRule.objects.select_related("server", "client")
    return {"version": FILE_VERSION, "rules": [file_entry(serialize(rule)) for rule in listed]}


def file_entry(described: dict) -> dict:
    return {name: described[name] for name in FILE_FIELDS}


def read_rules_file(text: str) -> list[tuple[uuid.UUID, RuleRequest]]:
    """The file's rules in order, each with its uid; RuleError naming every rule and field at fault."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RuleError([f"line {exc.lineno}, column {exc.colno}: {exc.msg}"]) from None
    if not isinstance(document, dict) or document.get("version") != FILE_VERSION:
        raise RuleError([f'the file must be a JSON object with "version": {FILE_VERSION} and a "rules" list'])
    entries = document.get("rules")
    if not isinstance(entries, list):
        raise RuleError(['"rules" must be a list'])
    errors, read, first_seen = [], [], {}
    for index, entry in enumerate(entries, 1):
        where = f"rule {index}"
        if isinstance(entry, dict) and isinstance(entry.get("uid"), str):
            where += f" ({entry['uid']})"
        found, uid, request = read_entry(entry)
        if uid is not None and uid in first_seen:
            found.append(("uid", f"the same uid as rule {first_seen[uid]}"))
        elif uid is not None:
            first_seen[uid] = index
        errors += [f"{where} {name}: {message}" for name, message in found]
        read.append((uid, request))
    if errors:
        raise RuleError(errors)
    return read


def read_entry(entry) -> tuple[list[tuple[str, str]], uuid.UUID | None, RuleRequest | None]:
    if not isinstance(entry, dict):
        return [("", "must be an object")], None, None
    found = [(name, "is not a field of a rule") for name in entry if name not in FILE_FIELDS]
    found += [(name, "is required") for name in ("uid", "action") if name not in entry]
    found += [
        (name, f"must be {' or '.join('null' if t is type(None) else t.__name__ for t in FILE_TYPES[name])}")
        for name in FILE_FIELDS
        if name in entry and not isinstance(entry[name], FILE_TYPES[name])
    ]
    if found:
        return found, None, None
    try:
        uid = uuid.UUID(entry["uid"])
    except ValueError:
        return [("uid", f"{entry['uid']!r} is not a UUID")], None, None
    request = RuleRequest(**{name: value for name, value in entry.items() if name != "uid"})
    return problems(request)[0], uid, request


@transaction.atomic
def import_rules(read: list[tuple[uuid.UUID, RuleRequest]], replace_all: bool, actor: Actor = SYSTEM) -> ImportResult:
    """Apply a read rule file: its rules are created or updated by uid; with replace_all, the others go.

    With replace_all the rules end in the file's order. Without it, the rules already here keep their
    places and the file's new rules follow them in the file's order.
    """
    ordered = locked_rules()
    by_uid = {rule.uid: rule for rule in ordered}
    result, befores, incoming = ImportResult(), {}, []
    for uid, request in read:
        server, client = checked(request)
        rule = by_uid.get(uid) or PolicyRule(uid=uid)
        befores[uid] = serialize(rule) if rule.pk else None
        assign(rule, request, server, client)
        incoming.append(rule)
    if replace_all:
        wanted = {rule.uid for rule in incoming}
        for rule in ordered:
            if rule.uid not in wanted:
                result.deleted += 1
                result.changes.append({"before": serialize(rule), "after": None})
                rule.delete()
        ordered = incoming
    else:
        ordered = ordered + [rule for rule in incoming if rule.pk is None]
    place(ordered)
    for rule in incoming:
        before, after = befores[rule.uid], serialize(rule)
        if before is None:
            result.created += 1
        elif unplaced(before) != unplaced(after):
            rule.save()
            result.changed += 1
        elif before["position"] != after["position"]:
            result.moved += 1
        else:
            result.unchanged += 1
            continue
        result.changes.append({"before": before, "after": after})
    chain.record("rule.imported", actor, data={**result.counts(), "replace": replace_all, "changes": result.changes})
    return result


def unplaced(described: dict) -> dict:
    return {name: value for name, value in described.items() if name != "position"}
