"""A rule made from a held call, and that call decided by it: "Add rule and approve" / "Add rule and deny"."""

from dataclasses import dataclass

from approvals.audit.chain import Actor
from approvals.calls import deciding
from approvals.policy import rule_notes, rules
from approvals.policy.models import PolicyRule
from approvals.roles import DECIDE_CALLS


@dataclass
class Done:
    rule: PolicyRule
    decision: str  # what became of the call in hand, in words


def add_rule_and_decide(call_id: int, request: rules.RuleRequest, user, binding: str) -> Done:
    """Add the rule where it takes effect, then decide the call the way the rule would, through the queue's path
    and its binding check: a call decided or changed meanwhile is left as it is, and said so."""
    request.position, _ = rule_notes.placed(request)
    rule = rules.create_rule(request, Actor.user(user))
    if not user.has_perm(DECIDE_CALLS):
        return Done(rule, "the call was not decided: you may not decide calls")
    approve = request.action == PolicyRule.Action.ALLOW
    outcome = deciding.decide(call_id, user, approve, reason=f"By the new rule {rule}", shown_binding=binding)
    if deciding.conflicted(outcome, binding) or not outcome.won:
        return Done(rule, f"the call was not decided: {outcome.message}")
    return Done(rule, outcome.message)
