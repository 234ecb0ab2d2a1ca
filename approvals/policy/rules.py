"""Changing the policy's rules: the one write path for the console's pages, the commands and rule files.

A rule names its server and client by name, as an admin types them; every
problem is reported at once, so a form or a shell shows the whole list. Each
change locks the rules, validates, changes the rows and writes one audit event
with the rule before and after (as `serialize` gives it) in one transaction.
Positions stay 1..n without gaps after every change.
"""

from dataclasses import dataclass

from django.db import transaction

from approvals.audit import chain
from approvals.audit.chain import SYSTEM, Actor
from approvals.audit.snapshots import snapshot
from approvals.catalog.models import Server, slack_channel_problem
from approvals.policy import engine
from approvals.policy.kinds import CallKind
from approvals.policy.models import PolicyRule
from approvals.protocol.tools import DEFAULT_ANNOTATIONS
from approvals.tokens.models import ClientToken


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
    enabled: bool = True
    approvals_needed: int = 1
    approval_timeout_seconds: int | None = None  # None: the global APPROVAL_TIMEOUT_SECONDS
    escalate_before_seconds: int | None = None  # None: a call it holds is never escalated
    separation_of_duties: str = PolicyRule.SeparationOfDuties.INHERIT
    applies_to: str = CallKind.TOOL
    slack_channel: str = ""  # "": the server's channel, if any


def parse_annotation(text: str) -> tuple[str, bool]:
    """'readOnlyHint=true' as ('readOnlyHint', True)."""
    key, sep, value = text.partition("=")
    if not sep or value.strip().lower() not in ("true", "false"):
        raise RuleError([f"annotation {text!r} must look like KEY=true or KEY=false"])
    return key.strip(), value.strip().lower() == "true"


def problems(request: RuleRequest) -> tuple[list[tuple[str, str]], Server | None, ClientToken | None]:
    """(field, message) for everything wrong with the request, and the server and client it names."""
    found = []
    if request.action not in PolicyRule.Action.values:
        found.append(("action", f"action must be one of {', '.join(PolicyRule.Action.values)}, not {request.action!r}"))
    if request.applies_to not in CallKind.values:
        found.append(
            ("applies_to", f"a rule applies to one of {', '.join(CallKind.values)}, not {request.applies_to!r}")
        )
    elif request.applies_to == CallKind.PERMISSION and (request.server or request.annotations):
        found.append(("server", "permission requests come from an agent, not a server: name no server or annotations"))
    elif request.applies_to != CallKind.TOOL and request.annotations:
        found.append(("annotations", "annotations are a tool's: a rule for reads or prompts names none"))
    server = client = None
    if request.server:
        server = Server.objects.filter(name=request.server).first()
        if server is None:
            found.append(("server", f"no server named {request.server!r}"))
    if request.client:
        client = ClientToken.objects.filter(name=request.client).first()
        if client is None:
            found.append(("client", f"no client token named {request.client!r}"))
    glob = request.tool_glob
    if not glob or len(glob) > PolicyRule._meta.get_field("tool_glob").max_length or any(c.isspace() for c in glob):
        found.append(("tool_glob", "the tool pattern must be 1-200 characters without spaces, e.g. records_* or *"))
    annotations = request.annotations or {}
    unknown = sorted(set(annotations) - set(DEFAULT_ANNOTATIONS))
    if unknown:
        found.append(("annotations", f"unknown annotation {', '.join(unknown)}: use {', '.join(DEFAULT_ANNOTATIONS)}"))
    if any(not isinstance(v, bool) for v in annotations.values()):
        found.append(("annotations", "each annotation must be true or false"))
    found += [("conditions", error) for error in engine.check_conditions(request.conditions or [])]
    if len(request.name) > PolicyRule._meta.get_field("name").max_length:
        found.append(("name", "the name must be at most 100 characters"))
    return found + hold_problems(request), server, client


def hold_problems(request: RuleRequest) -> list[tuple[str, str]]:
    """What is wrong with how the rule has a held call decided."""
    found = []
    most, longest = PolicyRule.MAX_APPROVALS_NEEDED, PolicyRule.MAX_APPROVAL_TIMEOUT_SECONDS
    if not whole_number(request.approvals_needed, 1, most):
        found.append(("approvals_needed", f"the approvals needed must be a whole number from 1 to {most}"))
    timeout = request.approval_timeout_seconds
    if timeout is not None and not whole_number(timeout, 1, longest):
        found.append(
            (
                "approval_timeout_seconds",
                f"the approval timeout must be a whole number of seconds from 1 to {longest}, or empty: the global one",
            )
        )
    escalate = request.escalate_before_seconds
    if escalate is not None and not whole_number(escalate, 1, longest):
        found.append(
            (
                "escalate_before_seconds",
                f"the escalation must be a whole number of seconds from 1 to {longest}, or empty: never",
            )
        )
    choices = PolicyRule.SeparationOfDuties.values
    if request.separation_of_duties not in choices:
        found.append(("separation_of_duties", f"separation of duties must be one of {', '.join(choices)}"))
    if request.slack_channel and (problem := slack_channel_problem(request.slack_channel)):
        found.append(("slack_channel", problem))
    return found


def whole_number(value, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def checked(request: RuleRequest) -> tuple[Server | None, ClientToken | None]:
    found, server, client = problems(request)
    if found:
        raise RuleError([message for _, message in found])
    return server, client


# What a rule file holds for each rule, in this order; the rules' order in the file is their order.
FILE_FIELDS = (
    "uid",
    "name",
    "action",
    "applies_to",
    "server",
    "tool_glob",
    "client",
    "annotations",
    "conditions",
    "message",
    "approvals_needed",
    "approval_timeout_seconds",
    "escalate_before_seconds",
    "separation_of_duties",
    "slack_channel",
    "enabled",
)
# A rule as the audit log and rule files show it: its server and client by name.
SERIALIZED = ("id", "position", *FILE_FIELDS)


def serialize(rule: PolicyRule) -> dict:
    return snapshot(rule, SERIALIZED)


def locked_rules() -> list[PolicyRule]:
    """Every rule in order, locked until the transaction ends (on SQLite the write lock serialises instead)."""
    return list(PolicyRule.objects.select_for_update(of=("self",)).select_related("server", "client"))


def locked(ordered: list[PolicyRule], rule_id: int) -> PolicyRule:
    for rule in ordered:
        if rule.pk == rule_id:
            return rule
    raise PolicyRule.DoesNotExist(f"no rule {rule_id}")


def place(ordered: list[PolicyRule]) -> None:
    """Number the rules 1..n in this order, inserting the new ones."""
    for position, rule in enumerate(ordered, 1):
        if rule.pk is None:
            rule.position = position
            rule.save(force_insert=True)
        elif rule.position != position:
            PolicyRule.objects.filter(pk=rule.pk).update(position=position)
            rule.position = position


def assign(rule: PolicyRule, request: RuleRequest, server, client) -> None:
    rule.action = request.action
    rule.applies_to = request.applies_to
    rule.server = server
    rule.tool_glob = request.tool_glob
    rule.client = client
    rule.annotations = request.annotations or {}
    rule.conditions = request.conditions or []
    rule.message = request.message
    rule.name = request.name
    rule.enabled = request.enabled
    rule.approvals_needed = request.approvals_needed
    rule.approval_timeout_seconds = request.approval_timeout_seconds
    rule.escalate_before_seconds = request.escalate_before_seconds
    rule.separation_of_duties = request.separation_of_duties
    rule.slack_channel = request.slack_channel


def record(action: str, actor: Actor, rule: PolicyRule, before: dict | None, after: dict | None) -> None:
    chain.record(action, actor, server=rule.server, token=rule.client, data={"before": before, "after": after})


@transaction.atomic
def create_rule(request: RuleRequest, actor: Actor = SYSTEM) -> PolicyRule:
    """Insert the rule at its position (the end by default), renumbering the rules after it."""
    server, client = checked(request)
    ordered = locked_rules()
    if request.position is not None and not 1 <= request.position <= len(ordered) + 1:
        raise RuleError([f"the position must be between 1 and {len(ordered) + 1}"])
    rule = PolicyRule()
    assign(rule, request, server, client)
    ordered.insert(len(ordered) if request.position is None else request.position - 1, rule)
    place(ordered)
    record("rule.created", actor, rule, None, serialize(rule))
    return rule


@transaction.atomic
def update_rule(rule_id: int, request: RuleRequest, actor: Actor = SYSTEM) -> PolicyRule:
    """Change what the rule matches and does; its position stays (move_rule changes that)."""
    server, client = checked(request)
    rule = locked(locked_rules(), rule_id)
    before = serialize(rule)
    assign(rule, request, server, client)
    if serialize(rule) != before:
        rule.save()
        record("rule.changed", actor, rule, before, serialize(rule))
    return rule


@transaction.atomic
def set_rule_enabled(rule_id: int, enabled: bool, actor: Actor = SYSTEM) -> PolicyRule:
    rule = locked(locked_rules(), rule_id)
    if rule.enabled != enabled:
        before = serialize(rule)
        rule.enabled = enabled
        rule.save(update_fields=["enabled", "updated_at"])
        record("rule.changed", actor, rule, before, serialize(rule))
    return rule


@transaction.atomic
def move_rule(rule_id: int, position: int, actor: Actor = SYSTEM) -> PolicyRule:
    """Put the rule at `position` (1 is first), shifting the rules between."""
    ordered = locked_rules()
    rule = locked(ordered, rule_id)
    if not 1 <= position <= len(ordered):
        raise RuleError([f"the position must be between 1 and {len(ordered)}"])
    before = serialize(rule)
    ordered.remove(rule)
    ordered.insert(position - 1, rule)
    place(ordered)
    if rule.position != before["position"]:
        record("rule.moved", actor, rule, before, serialize(rule))
    return rule


@transaction.atomic
def delete_rule(rule_id: int, actor: Actor = SYSTEM) -> None:
    ordered = locked_rules()
    rule = locked(ordered, rule_id)
    before = serialize(rule)
    ordered.remove(rule)
    rule.delete()
    place(ordered)
    record("rule.deleted", actor, rule, before, None)


def engine_rule(rule: PolicyRule) -> engine.Rule:
    return engine.Rule(
        rule.pk,
        rule.name,
        rule.action,
        rule.tool_glob,
        rule.server_id,
        rule.client_id,
        rule.annotations,
        rule.conditions,
        rule.message,
        rule.applies_to,
    )
