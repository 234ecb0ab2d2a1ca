"""Deciding several pending calls at once, each through the one decision path.

Every selected call is decided by deciding.decide, in a transaction of its own:
races, the binding to what the operator saw, the audit events and the live news
are exactly those of a single decision, and one call decided first by someone
else leaves the others to go ahead. Several calls are approved together only when
they share one binding (the arguments as they stand, edits included, and the tool's
definition) and were shown with it, so that one look covers them all.
"""

from dataclasses import dataclass, field

from approvals.calls import deciding
from approvals.calls.lifecycle import call_binding
from approvals.calls.models import Call
from approvals.db import transitions

MAX_SELECTED = 500


@dataclass
class BulkOutcome:
    refused: str = ""  # why nothing was tried
    outcomes: list[transitions.Outcome] = field(default_factory=list)
    missing: list[int] = field(default_factory=list)

    @property
    def decided(self) -> int:
        """Calls this decision ended: denied, or approved with the last approval their quorum needed."""
        return sum(outcome.won and outcome.row.status != Call.Status.PENDING for outcome in self.outcomes)

    def waiting(self) -> list[transitions.Outcome]:
        """Approvals recorded on calls whose quorum needs more."""
        return [outcome for outcome in self.outcomes if outcome.won and outcome.row.status == Call.Status.PENDING]

    def lost(self) -> list[transitions.Outcome]:
        return [outcome for outcome in self.outcomes if not outcome.won]


def mixed_selection(calls: list[Call], shown: set[str]) -> str:
    """Why these calls cannot be approved together, or '' when they can: one tool, one binding, as shown."""
    tools = sorted({call.tool_name for call in calls})
    if len(tools) > 1:
        return (
            f"Approving calls together needs one tool; the selection calls {len(tools)} ({', '.join(tools)}). "
            "Approve them one by one."
        )
    if len(shown | {call_binding(call) for call in calls}) > 1:
        return (
            "Approving calls together needs the same arguments (edits included) and the same tool definition "
            "in every call, as shown; the selected calls differ. Approve them one by one."
        )
    return ""


def decide_selected(selection: dict[int, str], user, approve: bool, reason: str) -> BulkOutcome:
    """Decide the calls `selection` names, each with the binding it was shown with."""
    if not selection:
        return BulkOutcome(refused="Select at least one call.")
    if len(selection) > MAX_SELECTED:
        return BulkOutcome(refused=f"Select at most {MAX_SELECTED} calls at once.")
    calls = list(
        Call.objects.filter(pk__in=selection).only(
            "pk", "tool_name", "arguments_digest", "edited_arguments", "tool_digest"
        )
    )
    if approve and (problem := mixed_selection(calls, {selection[call.pk] for call in calls})):
        return BulkOutcome(refused=problem)
    found = sorted(call.pk for call in calls)
    outcome = BulkOutcome(missing=sorted(set(selection) - set(found)))
    for pk in found:
        outcome.outcomes.append(deciding.decide(pk, user, approve, reason=reason, shown_binding=selection[pk]))
    return outcome
