"""The policy: a pure function from the facts of a call to allow, ask or deny.

Rules are tried in order; the first enabled rule that matches decides. A tool call
or permission request no rule matches is asked about; a resource read or prompt get
is allowed, as it was before rules could name them. Tool annotations count only for trusted servers:
for any other server a rule that names annotations never matches. Every rule tried
says why it did not match, so the console can show an admin what the policy did.
"""

import json
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any

ALLOW, ASK, DENY = "allow", "ask", "deny"
# What a rule applies to: the kinds of Call (models.CallKind), named here so the engine stays plain Python.
TOOL, PERMISSION, RESOURCE, PROMPT = "tool", "permission", "resource", "prompt"
KIND_WORDS = {TOOL: "tool calls", PERMISSION: "permission requests", RESOURCE: "resource reads", PROMPT: "prompt gets"}
# What no rule's match means for each kind: reads and prompts pass unless a rule names them.
DEFAULT_ACTIONS = {RESOURCE: ALLOW, PROMPT: ALLOW}
# What a rule's pattern is matched against, per kind, in what the console tells an admin.
SUBJECT_WORDS = {TOOL: "the tool", PERMISSION: "the tool", RESOURCE: "the URI", PROMPT: "the prompt"}
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
    applies_to: str = TOOL


@dataclass(frozen=True)
class CallFacts:
    """What a rule can match: for a permission request, the agent's tool and its input, and no server;
    for a resource read, the URI as `tool_name` (and as `arguments["uri"]`); for a prompt, its exposed
    name and its arguments."""

    client_id: int
    server_id: int | None
    tool_name: str
    arguments: dict
    annotations: dict | None  # None when the server is not trusted, or there is none
    kind: str = TOOL


@dataclass(frozen=True)
class Trial:
    """One rule tried against a call: whether it matched, and why not (or how fail-closed made it match)."""

    rule: Rule
    matched: bool
    misses: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Verdict:
    action: str
    rule: Rule | None
    trials: tuple[Trial, ...] = ()

    @property
    def rule_name(self):
        if self.rule is None:
            return f"no rule matched: {self.action} by default"
        return self.rule.name or f"rule {self.rule.id}"

    @property
    def message(self):
        return self.rule.message if self.rule else ""


class Unevaluable(Exception):
    """A condition whose answer is unknown: a missing value or a value of the wrong type for its operator."""


def evaluate(rules: list[Rule], facts: CallFacts) -> Verdict:
    trials = []
    for rule in rules:
        trial = attempt(rule, facts)
        trials.append(trial)
        if trial.matched:
            return Verdict(rule.action, rule, tuple(trials))
    return Verdict(DEFAULT_ACTIONS.get(facts.kind, ASK), None, tuple(trials))


def attempt(rule: Rule, facts: CallFacts) -> Trial:
    """Try one rule; every reason it does not match is given, not only the first.

    Fail closed: a condition that cannot be evaluated counts as holding for a rule that
    denies or asks, and as not holding for a rule that allows, so that an argument of an
    unexpected shape never slips past a restriction nor earns an allowance.
    """
    misses, notes = [], []
    if rule.applies_to != facts.kind:
        misses.append(f"the rule applies to {KIND_WORDS.get(rule.applies_to, rule.applies_to)}")
    if rule.server_id is not None and rule.server_id != facts.server_id:
        misses.append("the call goes to another server")
    if rule.client_id is not None and rule.client_id != facts.client_id:
        misses.append("the call comes from another client")
    if not fnmatchcase(facts.tool_name, rule.tool_glob or "*"):
        subject = SUBJECT_WORDS.get(facts.kind, "the tool")
        misses.append(f"{subject} {facts.tool_name} does not match {rule.tool_glob!r}")
    if rule.annotations and facts.annotations is None:
        misses.append("the rule names annotations and the server is not trusted, so they do not count")
    elif rule.annotations:
        for key, wanted in rule.annotations.items():
            if facts.annotations.get(key) != wanted:
                misses.append(
                    f"the tool's {key} is {shown(facts.annotations.get(key))}, the rule needs {shown(wanted)}"
                )
    closed = rule.action in (DENY, ASK)
    for number, condition in enumerate(rule.conditions, 1):
        label = f"condition {number} ({condition_text(condition)})"
        try:
            holds, reason = condition_result(condition, facts.arguments)
        except Unevaluable as exc:
            if closed:
                notes.append(
                    f"{label} cannot be evaluated ({exc}): counted as matched, since a {rule.action} rule fails closed"
                )
            else:
                misses.append(
                    f"{label} cannot be evaluated ({exc}): counted as not matched, since an allow rule fails closed"
                )
            continue
        if not holds:
            misses.append(f"{label} does not hold: {reason}")
    return Trial(rule, not misses, tuple(misses), tuple(notes))


def condition_result(condition: dict, arguments: dict) -> tuple[bool, str]:
    """Whether the condition holds and what the argument was; Unevaluable when that cannot be known."""
    path = condition.get("path", "")
    value = lookup(arguments, path)
    op, expected = condition.get("op", "eq"), condition.get("value")
    if value is _MISSING:
        if op in ("lt", "lte", "gt", "gte", "contains", "glob"):
            raise Unevaluable(f"{path or 'the arguments'} is missing")
        return op in ("absent", "ne", "not_in"), f"{path} is missing"
    seen = f"{path or 'the arguments'} is {shown(value)}"
    if op in ("exists", "absent"):
        return op == "exists", seen
    return compare(op, value, expected), seen


def compare(op: str, value: Any, expected: Any) -> bool:
    if op in ("eq", "ne"):
        same_kind(value, [expected])
        return (value == expected) == (op == "eq")
    if op in ("in", "not_in"):
        if not isinstance(expected, list):
            raise Unevaluable(f"'{op}' needs a list, not {shown(expected)}")
        same_kind(value, expected)
        return (value in expected) == (op == "in")
    if op == "contains":
        if isinstance(value, str) and isinstance(expected, str) or isinstance(value, list):
            return expected in value
        raise Unevaluable(f"{shown(value)} is not a list, nor a string to find {shown(expected)} in")
    if op == "glob":
        if not isinstance(value, str):
            raise Unevaluable(f"{shown(value)} is not a string")
        return fnmatchcase(value, str(expected))
    if not comparable(value, expected):
        raise Unevaluable(f"{shown(value)} cannot be ordered against {shown(expected)}")
    return {"lt": value < expected, "lte": value <= expected, "gt": value > expected, "gte": value >= expected}[op]


def json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return "null"


def same_kind(value: Any, expected: list) -> None:
    """Unevaluable unless `value` is of the kind of some value it is compared with (null, compared for, matches any).

    A list where a string is compared is not "unequal" to it: whether it holds the string is unknown, and an
    allowance or a restriction that answered either way would be guessing.
    """
    kinds = {json_kind(e) for e in expected if e is not None}
    if kinds and value is not None and json_kind(value) not in kinds:
        raise Unevaluable(f"{shown(value)} is {json_kind(value)}, compared with {' or '.join(sorted(kinds))}")


def comparable(value: Any, expected: Any) -> bool:
    """Two numbers (true and false are not numbers here), or two strings."""
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (value, expected))
    return numbers or (isinstance(value, str) and isinstance(expected, str))


def condition_text(condition: dict) -> str:
    op = condition.get("op", "eq")
    words = f"{condition.get('path', '')} {op}"
    return words if op in ("exists", "absent") else f"{words} {shown(condition.get('value'))}"


def shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:59] + "…"


def lookup(arguments: Any, path: str) -> Any:
    value = arguments
    for part in [p for p in path.split(".") if p]:
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isascii() and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return _MISSING
    return value


def check_conditions(conditions: Any) -> list[str]:
    """Reasons a rule's argument conditions are malformed, for the shell, the pages and imported files alike."""
    if not isinstance(conditions, list):
        return ["conditions must be a list"]
    errors = []
    for i, c in enumerate(conditions, 1):
        if not isinstance(c, dict) or not isinstance(c.get("path"), str) or c.get("op", "eq") not in OPERATORS:
            errors.append(f"condition {i} needs a string 'path' and an 'op' among {', '.join(OPERATORS)}")
            continue
        op, value = c.get("op", "eq"), c.get("value")
        unknown = sorted(set(c) - {"path", "op", "value"})
        if unknown:
            errors.append(f"condition {i} has unknown keys {', '.join(unknown)}: use path, op and value")
        elif op in ("in", "not_in") and not isinstance(value, list):
            errors.append(f"condition {i}: '{op}' needs a list value")
        elif op in ("lt", "lte", "gt", "gte") and not comparable(value, value):
            errors.append(f"condition {i}: '{op}' needs a number or a string value")
        elif op == "glob" and not isinstance(value, str):
            errors.append(f"condition {i}: 'glob' needs a string value such as '/tmp/*'")
    return errors
