"""How a rule reads to an admin: one line that says it, what it holds a call to, and what makes it behave other
than an admin may expect (a rule an earlier one shadows, annotations of an untrusted server)."""

import json

from approvals.catalog.models import Server
from approvals.policy import placement, rules, shadowing
from approvals.policy.kinds import CallKind
from approvals.policy.models import PolicyRule
from approvals.policy.rules import engine_rule


def warnings(rule: PolicyRule) -> list[str]:
    """What makes a valid rule behave other than an admin may expect."""
    notes = []
    if rule.annotations and rule.server and not rule.server.trusted:
        notes.append(f"{rule.server.name} is not trusted, so this rule's annotations never match its tools")
    if rule.annotations and rule.server is None and not Server.objects.filter(trusted=True).exists():
        notes.append("no server is trusted, so a rule that names annotations matches no call")
    if rule.message and rule.action != PolicyRule.Action.DENY:
        notes.append("the message is told to clients only when the rule denies")
    if rule.action != PolicyRule.Action.ASK and hold_words(rule):
        notes.append("approvals needed, the approval timeout and separation of duties count only when the rule asks")
    cover = shadowed(list(PolicyRule.objects.select_related("server", "client"))).get(rule.pk)
    if cover is not None:
        notes.append(shadow_note(rule, cover))
    return notes + [
        f"{words}: {earlier} at position {earlier.position} takes them first" for earlier, words in partly_covered(rule)
    ]


def enabled_in_order() -> list[PolicyRule]:
    return list(PolicyRule.objects.filter(enabled=True).select_related("server", "client"))


def partly_covered(rule: PolicyRule) -> list[tuple[PolicyRule, str]]:
    """Each enabled rule above `rule` that takes some, not all, of its calls, with those calls in words."""
    ordered = [r for r in enabled_in_order() if r.position < rule.position] + [rule]
    names = {}
    for r in ordered:
        if r.server:
            names["server", r.server_id] = r.server.name
        if r.client:
            names["client", r.client_id] = r.client.name
    engine_rules = [engine_rule(r) for r in ordered]
    by_id = {r.pk: r for r in ordered}
    return [
        (by_id[earlier.id], placement.shared_calls(earlier, engine_rules[-1], names))
        for earlier in placement.partly_covering(engine_rules, len(engine_rules) - 1)
    ]


def placed(request: rules.RuleRequest) -> tuple[int, PolicyRule | None]:
    """Where a new rule goes: above the first enabled rule that would take every call it matches, else last;
    with that rule. `request` must be valid (rules.problems finds nothing)."""
    server, client = rules.checked(request)
    new = PolicyRule()
    rules.assign(new, request, server, client)
    enabled = enabled_in_order()
    found = placement.placement([engine_rule(r) for r in enabled], engine_rule(new))
    if found.above is None:
        return PolicyRule.objects.count() + 1, None
    above = next(r for r in enabled if r.pk == found.above.id)
    return above.position, above


def placed_words(position: int, above: PolicyRule | None) -> str:
    if above is None:
        return f"at position {position}, last: no rule before it takes every call it matches"
    return (
        f"at position {position}, above {above} (position {above.position}), which matches every call this rule "
        "would and would leave it nothing to decide"
    )


def shadowed(ordered: list[PolicyRule]) -> dict[int, PolicyRule]:
    """Each enabled rule of `ordered` (every rule, in order) that can never match, with the earlier one covering it."""
    enabled = [rule for rule in ordered if rule.enabled]
    by_id = {rule.pk: rule for rule in enabled}
    return {pk: by_id[cover.id] for pk, cover in shadowing.shadowing([engine_rule(r) for r in enabled]).items()}


def shadow_note(rule: PolicyRule, cover: PolicyRule) -> str:
    return (
        f"this rule can never match: {cover} at position {cover.position} comes first and matches every call "
        "it would; move it above that rule or narrow that rule"
    )


def hold_words(rule) -> list[str]:
    """How a call the rule asks about is decided, where it differs from the defaults: ['2 approvals', ...]."""
    words = []
    if rule.approvals_needed != 1:
        words.append(f"{rule.approvals_needed} approvals")
    if rule.approval_timeout_seconds:
        words.append(f"times out after {rule.approval_timeout_seconds} s")
    if rule.escalate_before_seconds:
        words.append(f"escalates {rule.escalate_before_seconds} s before it expires")
    if rule.separation_of_duties == PolicyRule.SeparationOfDuties.REQUIRE:
        words.append("not by the token's owner")
    elif rule.separation_of_duties == PolicyRule.SeparationOfDuties.OFF:
        words.append("the token's owner may approve")
    return words


SUMMARY_SUBJECTS = {
    CallKind.PERMISSION: "permission for {}",
    CallKind.RESOURCE: "reading {}",
    CallKind.PROMPT: "prompt {}",
}


def summary(rule):
    """One line that reads like the rule: 'ask records_* on Records from ci-bot where readOnlyHint=false'."""
    words = [rule.action, SUMMARY_SUBJECTS.get(rule.applies_to, "{}").format(rule.tool_glob)]
    if rule.server:
        words.append(f"on {rule.server.name}")
    if rule.client:
        words.append(f"from {rule.client.name}")
    if rule.annotations:
        words.append("where " + ", ".join(f"{k}={str(v).lower()}" for k, v in rule.annotations.items()))
    if rule.conditions:
        words.append(f"if {json.dumps(rule.conditions)}")
    if rule.action == PolicyRule.Action.ASK and hold_words(rule):
        words.append("[" + "; ".join(hold_words(rule)) + "]")
    if rule.name:
        words.append(f"({rule.name})")
    return " ".join(words)
