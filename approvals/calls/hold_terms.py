"""The terms a held call is decided under, fixed when it is held from the rule that asked: how long it may wait,
how many approvals it needs, whether its token's owner may approve it, and when it is escalated."""

from datetime import timedelta

from django.conf import settings

from approvals.policy import engine
from approvals.policy.models import PolicyRule


def hold_terms(rule: engine.Rule | None, rows: list[PolicyRule]) -> tuple[float, int, bool]:
    """How a held call is decided, from the rule of `rows` that asked (None: no rule matched): its timeout
    in seconds, the approvals it needs, and whether its token's owner is kept from approving it."""
    row = next((row for row in rows if row.pk == rule.id), None) if rule is not None else None
    if row is None:
        return settings.APPROVAL_TIMEOUT_SECONDS, 1, settings.SEPARATION_OF_DUTIES
    separated = {PolicyRule.SeparationOfDuties.REQUIRE: True, PolicyRule.SeparationOfDuties.OFF: False}.get(
        row.separation_of_duties, settings.SEPARATION_OF_DUTIES
    )
    return row.approval_timeout_seconds or settings.APPROVAL_TIMEOUT_SECONDS, row.approvals_needed, separated


def escalation_time(rule: engine.Rule | None, rows: list[PolicyRule], expires_at):
    """When a call held until `expires_at` by `rule` is flagged as about to expire: None when the rule names no time."""
    row = next((row for row in rows if row.pk == rule.id), None) if rule is not None else None
    if row is None or not row.escalate_before_seconds:
        return None
    return expires_at - timedelta(seconds=row.escalate_before_seconds)
