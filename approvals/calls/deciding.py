"""An operator's decision on a held call: a denial, or one approval toward the call's quorum.

The queue, the API, bulk decisions and the decide command all decide through decide(), so that
a decision is checked the same way wherever it comes from: against the binding the operator saw,
separation of duties and the approvals already in. The quorum helpers are what pages and the API
show of a held call before anyone decides: the approvals that count so far, and why a user may not approve.
"""

from django.db import transaction
from django.utils import timezone

from approvals.audit import chain
from approvals.audit.chain import Actor
from approvals.audit.values import value_fields
from approvals.calls import agent_tools
from approvals.calls.lifecycle import call_binding
from approvals.calls.models import Call, CallApproval
from approvals.db import transitions
from approvals.live import events
from approvals.protocol.schemas import validate


def approval_refusal(call: Call, user, os_user: str = "") -> str:
    """Why this user may not approve the call as it stands, or "": the queue disables its button with the reason.

    `os_user` names the host account of a command-line approval, which may fill one place of a quorum only.
    """
    if call.separation_of_duties and call.token.owner_id is not None and call.token.owner_id == user.pk:
        return (
            f"You own the token {call.token.name} that made this call, and separation of duties asks another "
            "operator to approve it."
        )
    if call.approvals_needed > 1 and any(approval.user_id == user.pk for approval in current_approvals(call)):
        return f"You approved already: {approvals_text(call)}."
    if os_user and call.approvals_needed > 1:
        earlier = [approval.username for approval in current_approvals(call) if approval.os_user == os_user]
        if earlier:
            return (
                f"The host account {os_user} approved already, as {earlier[0]}; a quorum needs distinct people: "
                f"{approvals_text(call)}."
            )
    return ""


def current_approvals(call: Call) -> list[CallApproval]:
    """The approvals that count: those of the arguments as they stand now (an edit makes earlier ones void).

    Read from the call's prefetched approvals when a page read them with its calls (one query for all).
    """
    binding = call_binding(call)
    return [approval for approval in call.approvals.all() if approval.binding == binding]


def approvers(call: Call) -> list[str]:
    return [approval.username for approval in current_approvals(call)]


def approvals_text(call: Call) -> str:
    """ "1 of 2 approvals: ann" """
    names = approvers(call)
    return f"{len(names)} of {call.approvals_needed} approvals" + (f": {', '.join(names)}" if names else "")


@transaction.atomic
def decide(
    call_id,
    user,
    approve: bool,
    reason: str = "",
    edited_arguments=None,
    shown_binding: str | None = None,
    os_user: str = "",
    via: str = "queue",
    device: str = "",
) -> transitions.Outcome:
    """An operator's decision: a denial, or one approval of the call's quorum.

    The call's row is locked for the decision, so that of racing operators (or an operator and the
    expiry) exactly one ends it, and approvals arriving at once are counted one after the other.
    A single denial ends the call; it runs once approvals of the same arguments by
    `approvals_needed` distinct operators are in. Editing approves the new arguments and voids the
    approvals of the old ones, which their operators never saw. `os_user`, the host account of a
    command-line decision, goes into its audit events and counts once toward a quorum. `via` (one of
    VIAS) and `device` (the browser device or chat identity it came through) say where the decision came
    from, in every audit event it writes.
    """
    if via not in VIAS:
        raise ValueError(f"unknown origin of a decision: {via!r}")
    origin = {"via": via} | ({"device": device} if device else {}) | ({"os_user": os_user} if os_user else {})
    call = Call.objects.select_for_update(of=("self",)).select_related("tool", "token").get(pk=call_id)
    if call.status != Call.Status.PENDING:
        return transitions.Outcome(False, call, already_text(call))
    if shown_binding is not None and shown_binding != call_binding(call):
        return transitions.Outcome(False, call, UNSEEN)
    if not approve:
        return deny(call, user, reason.strip() or "denied by an operator", origin)
    refusal = approval_refusal(call, user, os_user)
    if refusal:
        return transitions.Outcome(False, call, refusal)
    if edited_arguments is not None and not call.editable:
        return transitions.Outcome(False, call, NOT_EDITABLE)
    if edited_arguments is not None:
        errors = validate(agent_tools.input_schema(call), edited_arguments)
        if errors:
            return transitions.Outcome(False, call, "The edited arguments are not valid.", errors)
    return approve_call(call, user, reason, edited_arguments, os_user, origin)


# Where a decision came from: the queue's pages, the API, the decide command, a Slack message, a page a push opened.
VIAS = ("queue", "api", "command line", "slack", "push")

UNSEEN = "The call or its tool changed since it was shown, or the decision named no call; look again before deciding."


def conflicted(outcome: transitions.Outcome, shown_binding: str | None) -> bool:
    """Whether a refused decision lost to the call itself: decided or ended first, or not the call that was shown.

    The rest of the refusals (separation of duties, a quorum's second approval, invalid edits) are the user's own.
    """
    if outcome.won or outcome.errors:
        return False
    call = outcome.row
    return call.status != Call.Status.PENDING or shown_binding != call_binding(call)


NOT_EDITABLE = "A resource read or a prompt is approved or denied as it was asked; it cannot be edited."


def deny(call: Call, user, reason: str, origin: dict) -> transitions.Outcome:
    changes = {
        "status": Call.Status.DENIED,
        "decided_by": user,
        "decided_by_name": user.get_username(),
        "decided_at": timezone.now(),
        "reason": reason,
        "edited_arguments": None,
    }
    won, call = transitions.move(
        Call,
        call.pk,
        [Call.Status.PENDING],
        changes,
        actor=Actor.user(user),
        audit={"call.denied": {"reason": reason, **origin}},
        event="call.decided",
    )
    return transitions.Outcome(True, call, "Denied.") if won else transitions.Outcome(False, call, already_text(call))


def approve_call(call: Call, user, reason: str, edited_arguments, os_user: str, origin: dict) -> transitions.Outcome:
    """Record the approval (with the edit it makes), and approve the call when it completes the quorum."""
    audit = {}
    if edited_arguments is not None and edited_arguments != call.final_arguments:
        audit["call.edited"] = {
            **value_fields("before", call.final_arguments),
            **value_fields("after", edited_arguments),
            **origin,
        }
        call.edited_arguments = None if edited_arguments == call.arguments else edited_arguments
    binding = call_binding(call)
    CallApproval.objects.create(call=call, user=user, username=user.get_username(), os_user=os_user, binding=binding)
    names = approvers(call)
    if len(names) < call.approvals_needed:
        Call.objects.filter(pk=call.pk).update(edited_arguments=call.edited_arguments)
        audit["call.approval"] = {
            "reason": reason,
            "approvals": names,
            "needed": call.approvals_needed,
            **origin,
        }
        with chain.batch():
            for action, data in audit.items():
                chain.record(action, Actor.user(user), call=call, data=data)
        events.changed(call, "call.approval")
        return transitions.Outcome(True, call, f"Approval recorded: {approvals_text(call)}; the call waits for more.")
    changes = {
        "status": Call.Status.APPROVED,
        "decided_by": user,
        "decided_by_name": user.get_username(),
        "decided_at": timezone.now(),
        "reason": reason,
        "edited_arguments": call.edited_arguments,
    }
    audit["call.approved"] = {"reason": reason} | ({"approvals": names} if call.approvals_needed > 1 else {}) | origin
    won, call = transitions.move(
        Call, call.pk, [Call.Status.PENDING], changes, actor=Actor.user(user), audit=audit, event="call.decided"
    )
    return transitions.Outcome(True, call, "Approved.") if won else transitions.Outcome(False, call, already_text(call))


def already_text(call: Call) -> str:
    """What a late decision is told: the decision that won, not what the call did after it."""
    if call.status == Call.Status.CANCELLED and call.reason:
        # Not only clients cancel: revoking a token cancels its waiting calls too.
        return f"Already cancelled: {call.reason}."
    if call.status in Call.CUT_SHORT or not call.decided_by_name:
        return f"Already {call.get_status_display().lower()}."
    verb = "denied" if call.status == Call.Status.DENIED else "approved"
    who = "by policy" if call.decided_by_name == "policy" else f"by {call.decided_by_name}"
    why = f": {call.reason}" if call.status == Call.Status.DENIED and call.reason else ""
    return f"Already {verb} {who}{why}."
