"""The policy: a pure function from the facts of a call to allow, ask or deny.

Rules are tried in order; the first enabled rule that matches decides. A call no
rule matches is asked about. Tool annotations count only for trusted servers:
for any other server a rule that names annotations never matches.
"""

from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any

ALLOW, ASK, DENY = "allow", "ask", "deny"
_MISSING = object()
OPERATORS = ("eq", "ne", "in", "not_in", "lt", "lte", "gt", "gte", "contains", "glob", "exists", "absent")


@dataclass(frozen=True)
class Rule:
    id: int | None
    name: str
    action: str
    tool_glob: str = "*"
    server_id: int | None = None
    client_id: int | None = None
    annotations: dict = field(default_factory=dict)
    conditions: list = field(default_factory=list)
    message: str = ""


@dataclass(frozen=True)
class CallFacts:
    client_id: int
    server_id: int
    tool_name: str
    arguments: dict
    annotations: dict | None  # None when the server is not trusted


@dataclass(frozen=True)
class Verdict:
    action: str
    rule: Rule | None

    @property
    def rule_name(self):
        if self.rule is None:
            return "no rule matched: ask by default"
        return self.rule.name or f"rule {self.rule.id}"

    @property
    def message(self):
        return self.rule.message if self.rule else ""


def evaluate(rules: list[Rule], facts: CallFacts) -> Verdict:
    for rule in rules:
        if matches(rule, facts):
            return Verdict(rule.action, rule)
    return Verdict(ASK, None)


def matches(rule: Rule, facts: CallFacts) -> bool:
    if rule.server_id is not None and rule.server_id != facts.server_id:
        return False
    if rule.client_id is not None and rule.client_id != facts.client_id:
        return False
    if not fnmatchcase(facts.tool_name, rule.tool_glob or "*"):
        return False
    if rule.annotations:
        if facts.annotations is None:
            return False
        if any(facts.annotations.get(k) != v for k, v in rule.annotations.items()):
            return False
    return all(condition_holds(c, facts.arguments) for c in rule.conditions)


def condition_holds(condition: dict, arguments: dict) -> bool:
    value = lookup(arguments, condition.get("path", ""))
    op, expected = condition.get("op", "eq"), condition.get("value")
    if op == "exists":
        return value is not _MISSING
    if op == "absent":
        return value is _MISSING
    if value is _MISSING:
        return op in ("ne", "not_in")
    try:
        return compare(op, value, expected)
    except TypeError:
        # A comparison across types (a string against a number) simply does not match.
        return False


def compare(op: str, value: Any, expected: Any) -> bool:
    if op == "eq":
        return value == expected
    if op == "ne":
        return value != expected
    if op == "in":
        return value in expected
    if op == "not_in":
        return value not in expected
    if op == "contains":
        return expected in value
    if op == "glob":
        return isinstance(value, str) and fnmatchcase(value, str(expected))
    if isinstance(value, bool) or isinstance(expected, bool):
        return False
    return {"lt": value < expected, "lte": value <= expected, "gt": value > expected, "gte": value >= expected}[op]


def lookup(arguments: Any, path: str) -> Any:
    value = arguments
    for part in [p for p in path.split(".") if p]:
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return _MISSING
    return value


def check_conditions(conditions: Any) -> list[str]:
    """Reasons a rule's argument conditions are malformed, for the admin's form."""
    if not isinstance(conditions, list):
        return ["conditions must be a list"]
    errors = []
    for i, c in enumerate(conditions, 1):
        if not isinstance(c, dict) or not isinstance(c.get("path"), str) or c.get("op", "eq") not in OPERATORS:
            errors.append(f"condition {i} needs a string 'path' and an 'op' among {', '.join(OPERATORS)}")
        elif c.get("op", "eq") in ("in", "not_in") and not isinstance(c.get("value"), list):
            errors.append(f"condition {i}: '{c['op']}' needs a list value")
    return errors
