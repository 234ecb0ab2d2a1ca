"""A signed click in Slack, turned into a decision under exactly the queue's rules.

The endpoint (views/slack) has checked Slack's signature. The Slack user must be linked to a console person whose
role may decide calls; deciding.decide then applies separation of duties, the quorum's places, the binding of the
message as posted and the call's state, and records that the decision came through Slack, as whom. Whatever is
refused is told to that Slack user alone, and nothing is decided.
"""

import json
from dataclasses import dataclass

from approvals.audit import chain
from approvals.audit.chain import Actor
from approvals.calls import deciding
from approvals.calls.models import Call
from approvals.slack import blocks, linking, messages, transport


@dataclass(frozen=True)
class Clicker:
    """The Slack user who clicked, and where."""

    team_id: str
    user_id: str
    name: str
    channel: str

    @property
    def identity(self) -> str:
        return f"{self.team_id}:{self.user_id}"

    @classmethod
    def of(cls, payload: dict):
        user, team = payload.get("user"), payload.get("team")
        if not isinstance(user, dict) or not isinstance(user.get("id"), str):
            return None
        team_id = team.get("id") if isinstance(team, dict) else user.get("team_id")
        channel = payload.get("channel") if isinstance(payload.get("channel"), dict) else {}
        name = user.get("username") or user.get("name") or ""
        return cls(str(team_id or ""), user["id"], str(name), str(channel.get("id") or ""))


def handle(payload: dict, base_url: str) -> dict | None:
    """What to answer Slack with (a modal's errors), or None for an empty 200."""
    clicker = Clicker.of(payload)
    if clicker is None:
        return None
    if payload.get("type") == "block_actions":
        actions = payload.get("actions")
        if isinstance(actions, list) and actions and isinstance(actions[0], dict):
            clicked(actions[0], clicker, payload.get("trigger_id"), base_url)
        return None
    view = payload.get("view")
    if payload.get("type") == "view_submission" and isinstance(view, dict) and view.get("callback_id") == "deny":
        return denied(view, clicker, base_url)
    return None


def clicked(action: dict, clicker: Clicker, trigger_id, base_url: str):
    shown = blocks.read_value(action.get("value"))
    if action.get("action_id") not in ("approve", "deny") or shown is None:
        return
    call_id, binding = shown
    person, refusal = decider(clicker, call_id, base_url)
    if refusal:
        messages.tell_soon(clicker.channel, clicker.user_id, refusal)
    elif action["action_id"] == "approve":
        _, said = decision(call_id, person, True, "", binding, clicker)
        messages.tell_soon(clicker.channel, clicker.user_id, said)
    else:
        modal = blocks.deny_modal(action["value"], {"channel": clicker.channel})
        try:
            transport.call("views.open", {"trigger_id": str(trigger_id or ""), "view": modal})
        except transport.SlackError as exc:
            messages.tell_soon(clicker.channel, clicker.user_id, f"The reason could not be asked: {exc.message}")


def denied(view: dict, clicker: Clicker, base_url: str) -> dict | None:
    """The Deny modal submitted: the call denied with its reason, or the modal shows why not."""
    metadata = view.get("private_metadata")
    shown = blocks.read_value(metadata)
    if shown is None:
        return refused_in_modal("This form does not name a call of the console.")
    call_id, binding = shown
    clicker = Clicker(clicker.team_id, clicker.user_id, clicker.name, json.loads(metadata).get("channel") or "")
    person, refusal = decider(clicker, call_id, base_url)
    if refusal:
        return refused_in_modal(refusal)
    values = ((view.get("state") or {}).get("values") or {}).get("reason") or {}
    reason = str((values.get("reason") or {}).get("value") or "").strip()
    if not reason:
        return refused_in_modal(NO_REASON)
    won, said = decision(call_id, person, False, reason, binding, clicker)
    return None if won else refused_in_modal(said)


# As the queue's form asks it: the client is told why.
NO_REASON = "Give a reason for the denial: the client is told it."


def refused_in_modal(text: str) -> dict:
    return {"response_action": "errors", "errors": {"reason": text[:1000]}}


def decision(call_id: int, person, approve: bool, reason: str, binding: str, clicker: Clicker) -> tuple[bool, str]:
    """Whether deciding.decide took the decision, and what it said: the queue's rules, through Slack as this user."""
    try:
        outcome = deciding.decide(
            call_id, person, approve, reason=reason, shown_binding=binding, via="slack", device=clicker.identity
        )
    except Call.DoesNotExist:
        return False, "No such call."
    return outcome.won, outcome.message


def decider(clicker: Clicker, call_id: int, base_url: str):
    """(person, "") when the Slack user may decide as a person, else (None, why not), the refusal audited."""
    person = linking.person_for(clicker.team_id, clicker.user_id)
    if person is None:
        try:
            person = linking.by_email(clicker.team_id, clicker.user_id)
        except transport.SlackError:
            person = None
    if person is None:
        url = linking.link_url(base_url, clicker.team_id, clicker.user_id, clicker.name)
        refused(clicker, call_id, "not linked to a console person")
        return None, (
            "Your Slack account is not linked to a person of the console, so nothing was decided. "
            f"<{url}|Link it>, signed in to the console; the link works for 15 minutes."
        )
    problem = linking.may_decide(person)
    if problem:
        refused(clicker, call_id, problem)
        return None, f"{problem} Nothing was decided."
    return person, ""


def refused(clicker: Clicker, call_id: int, why: str):
    call = Call.objects.filter(pk=call_id).first()
    data = {"slack_user": clicker.identity, "slack_name": clicker.name, "reason": why}
    chain.record("slack.refused", Actor("slack", None, clicker.identity), call=call, data=data)
