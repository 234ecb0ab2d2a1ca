"""Adding policy rules, for the add_rule command and the console's pages alike.

A rule names its server and client by name, as an admin types them; every
problem is reported at once, so a form or a shell shows the whole list.
"""

import json
from dataclasses import dataclass

from django.db import transaction

from approvals.audit import chain
from approvals.audit.chain import SYSTEM, Actor
from approvals.models import ClientToken, PolicyRule, Server
from approvals.policy import engine
from approvals.protocol.tools import DEFAULT_ANNOTATIONS


class RuleError(ValueError):
    def __init__(self, errors: list[str]):
        super().__init__("; ".join(errors))
        self.errors = errors


@dataclass
class RuleRequest:
    action: str
    server: str | None = None
    tool_glob: str = "*"
    client: str | None = None
    annotations: dict | None = None
    conditions: list | None = None
    message: str = ""
    name: str = ""
    position: int | None = None  # 1 is first; None appends


def parse_annotation(text: str) -> tuple[str, bool]:
    """'readOnlyHint=true' as ('readOnlyHint', True)."""
    key, sep, value = text.partition("=")
    if not sep or value.strip().lower() not in ("true", "false"):
        raise RuleError([f"annotation {text!r} must look like KEY=true or KEY=false"])
    return key.strip(), value.strip().lower() == "true"


def check(request: RuleRequest) -> tuple[list[str], Server | None, ClientToken | None]:
    errors = []
    if request.action not in PolicyRule.Action.values:
        errors.append(f"action must be one of {', '.join(PolicyRule.Action.values)}, not {request.action!r}")
    server = client = None
    if request.server:
        server = Server.objects.filter(name=request.server).first()
        if server is None:
            errors.append(f"no server named {request.server!r}")
    if request.client:
        client = ClientToken.objects.filter(name=request.client).first()
        if client is None:
            errors.append(f"no client token named {request.client!r}")
    glob = request.tool_glob
    if not glob or len(glob) > PolicyRule._meta.get_field("tool_glob").max_length or any(c.isspace() for c in glob):
        errors.append("the tool pattern must be 1-200 characters without spaces, e.g. records_* or *")
    unknown = sorted(set(request.annotations or {}) - set(DEFAULT_ANNOTATIONS))
    if unknown:
        errors.append(f"unknown annotation {', '.join(unknown)}: use {', '.join(DEFAULT_ANNOTATIONS)}")
    errors += engine.check_conditions(request.conditions or [])
    if len(request.name) > PolicyRule._meta.get_field("name").max_length:
        errors.append("the name must be at most 100 characters")
    count = PolicyRule.objects.count()
    if request.position is not None and not 1 <= request.position <= count + 1:
        errors.append(f"the position must be between 1 and {count + 1}")
    return errors, server, client


def create_rule(request: RuleRequest, actor: Actor = SYSTEM) -> PolicyRule:
    """Insert the rule at its position (the end by default), renumbering the rules after it."""
    with transaction.atomic():
        errors, server, client = check(request)
        if errors:
            raise RuleError(errors)
        # Two rules added at once may share a position; order by (position, id) still decides between them.
        ordered = list(PolicyRule.objects.select_for_update())
        index = len(ordered) if request.position is None else request.position - 1
        rule = PolicyRule(
            action=request.action,
            server=server,
            tool_glob=request.tool_glob,
            client=client,
            annotations=request.annotations or {},
            conditions=request.conditions or [],
            message=request.message,
            name=request.name,
        )
        ordered.insert(index, rule)
        for position, each in enumerate(ordered, 1):
            if each.pk is None or each.position != position:
                each.position = position
                each.save()
        chain.record(
            "rule.changed", actor, server=server, token=client, data={"change": "created", "rule": describe(rule)}
        )
    return rule


def describe(rule: PolicyRule) -> dict:
    return {
        "id": rule.pk,
        "position": rule.position,
        "name": rule.name,
        "action": rule.action,
        "server": rule.server.name if rule.server else None,
        "tool_glob": rule.tool_glob,
        "client": rule.client.name if rule.client else None,
        "annotations": rule.annotations,
        "conditions": rule.conditions,
        "message": rule.message,
        "enabled": rule.enabled,
    }


def warnings(rule: PolicyRule) -> list[str]:
    """What makes a valid rule behave other than an admin may expect."""
    notes = []
    if rule.annotations and rule.server and not rule.server.trusted:
        notes.append(f"{rule.server.name} is not trusted, so this rule's annotations never match its tools")
    if rule.annotations and rule.server is None and not Server.objects.filter(trusted=True).exists():
        notes.append("no server is trusted, so a rule that names annotations matches no call")
    if rule.message and rule.action != PolicyRule.Action.DENY:
        notes.append("the message is told to clients only when the rule denies")
    return notes


def summary(rule):
    """One line that reads like the rule: 'ask records_* on Records from ci-bot where readOnlyHint=false'."""
    words = [rule.action, rule.tool_glob]
    if rule.server:
        words.append(f"on {rule.server.name}")
    if rule.client:
        words.append(f"from {rule.client.name}")
    if rule.annotations:
        words.append("where " + ", ".join(f"{k}={str(v).lower()}" for k, v in rule.annotations.items()))
    if rule.conditions:
        words.append(f"if {json.dumps(rule.conditions)}")
    if rule.name:
        words.append(f"({rule.name})")
    return " ".join(words)
