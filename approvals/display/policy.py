"""What the policy pages show: the rules with what they decided lately, and the argument paths a tool takes."""

from dataclasses import dataclass
from datetime import timedelta

from django.db.models import Count, Max, Q
from django.utils import timezone

from approvals.calls.agent_tools import AGENT_TOOL_SCHEMAS
from approvals.calls.models import Call
from approvals.catalog.models import Tool
from approvals.catalog.surface_models import Prompt
from approvals.policy import engine
from approvals.policy.engine import condition_text
from approvals.policy.kinds import CallKind
from approvals.policy.models import PolicyRule
from approvals.policy.rule_notes import hold_words, shadowed
from approvals.policy.rules import engine_rule
from approvals.protocol.tools import annotations

# How many of the latest calls the list counts what each rule decided and would decide now.
LATEST = 1000

RECENT = timedelta(hours=24)
# Enough for any schema a person picks paths from; a hostile one cannot make the page huge.
MAX_PATHS, MAX_DEPTH = 200, 6


@dataclass
class RuleRow:
    rule: PolicyRule
    recent: int
    last_matched: object
    shadowed_by: PolicyRule | None = None
    decided_latest: int = 0
    would_decide: int = 0

    @property
    def hold(self):
        return hold_words(self.rule)

    @property
    def conditions(self):
        return [condition_text(c) for c in self.rule.conditions if isinstance(c, dict)]


def rule_rows() -> list[RuleRow]:
    """Every rule in order, with the calls it decided in the last 24 hours, when it last decided one, and the
    earlier rule that keeps it from ever matching, if one does."""
    since = timezone.now() - RECENT
    stats = {
        row["rule_id"]: row
        for row in Call.objects.filter(rule__isnull=False)
        .values("rule_id")
        .annotate(recent=Count("id", filter=Q(policy_at__gte=since)), last=Max("policy_at"))
    }
    ordered = list(PolicyRule.objects.select_related("server", "client"))
    covered = shadowed(ordered)
    decided, would = latest_counts(ordered)
    return [
        RuleRow(
            rule,
            stats.get(rule.pk, {}).get("recent", 0),
            stats.get(rule.pk, {}).get("last"),
            covered.get(rule.pk),
            decided.get(rule.pk, 0),
            would.get(rule.pk, 0),
        )
        for rule in ordered
    ]


def latest_calls() -> list[Call]:
    return list(Call.objects.select_related("tool", "server").order_by("-id")[:LATEST])


def facts_of(call: Call) -> engine.CallFacts:
    """A stored call as the policy sees one arriving; annotations as its tool declares them now."""
    trusted = call.kind == CallKind.TOOL and call.tool is not None and call.server is not None and call.server.trusted
    name = call.tool_name
    if call.kind == CallKind.RESOURCE and isinstance(call.arguments, dict):
        name = str(call.arguments.get("uri", name))
    return engine.CallFacts(
        client_id=call.token_id,
        server_id=call.server_id,
        tool_name=name,
        arguments=call.arguments if isinstance(call.arguments, dict) else {},
        annotations=annotations(call.tool.definition) if trusted else None,
        kind=call.kind,
    )


def latest_counts(ordered: list[PolicyRule], calls: list[Call] | None = None) -> tuple[dict, dict]:
    """By rule id: how many of the latest calls it decided, and how many the enabled rules as they are now
    would have it decide."""
    calls = latest_calls() if calls is None else calls
    current = [engine_rule(rule) for rule in ordered if rule.enabled]
    decided, would = {}, {}
    for call in calls:
        if call.rule_id is not None:
            decided[call.rule_id] = decided.get(call.rule_id, 0) + 1
        verdict = engine.evaluate(current, facts_of(call))
        if verdict.rule is not None:
            would[verdict.rule.id] = would.get(verdict.rule.id, 0) + 1
    return decided, would


def argument_paths(schema, prefix="", depth=0, found=None) -> list[str]:
    """The paths into a tool's arguments, as conditions name them: dots between keys, digits for list items."""
    found = [] if found is None else found
    if not isinstance(schema, dict) or depth >= MAX_DEPTH:
        return found
    properties = schema.get("properties")
    if isinstance(properties, dict):
        for name, child in properties.items():
            if len(found) >= MAX_PATHS:
                break
            path = f"{prefix}{name}"
            found.append(path)
            argument_paths(child, f"{path}.", depth + 1, found)
    items = schema.get("items")
    if isinstance(items, dict) and prefix and len(found) < MAX_PATHS:
        first = f"{prefix}0"
        found.append(first)
        argument_paths(items, f"{first}.", depth + 1, found)
    return found


def tool_paths() -> list[dict]:
    """Each tool a rule may name, with its kind, server and argument paths, for the condition builder's suggestions.

    A rule for permission requests names a coding agent's tool: those the console knows the input of are listed too;
    a rule for prompts names a prompt, whose arguments are its paths.
    """
    tools = Tool.objects.filter(status__in=Tool.HELD).select_related("server").order_by("exposed_name")
    upstream = [
        {
            "kind": CallKind.TOOL,
            "tool": tool.exposed_name,
            "server": tool.server.name,
            "paths": argument_paths(tool.definition.get("inputSchema")),
        }
        for tool in tools
    ]
    agents = [
        {"kind": CallKind.PERMISSION, "tool": name, "server": "", "paths": argument_paths(schema)}
        for name, schema in sorted(AGENT_TOOL_SCHEMAS.items())
    ]
    prompts = [
        {
            "kind": CallKind.PROMPT,
            "tool": prompt.exposed_name,
            "server": prompt.server.name,
            "paths": [argument["name"] for argument in prompt.arguments if isinstance(argument.get("name"), str)],
        }
        for prompt in Prompt.objects.filter(status=Prompt.Status.ACTIVE).select_related("server")
    ]
    return upstream + agents + prompts
