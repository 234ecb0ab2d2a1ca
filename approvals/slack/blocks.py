"""What a call's Slack message says: the call, and Approve, Deny and Open while it waits; who decided, once decided.

The Approve and Deny buttons carry the call's id and the binding the message shows, so that a click decides the
call as posted: an edit of its arguments (which changes the binding) refuses a click on the old message.
"""

import json
import re

from django.conf import settings
from django.urls import reverse

from approvals.calls import deciding
from approvals.calls.lifecycle import call_binding
from approvals.calls.models import Call

# Of the arguments, a message shows this many values, each cut to this many characters, and none whose name says
# it is a credential: a channel is read by more people than the queue.
SHOWN_ARGUMENTS = 3
SHOWN_CHARS = 80
SECRET_NAME = re.compile(r"secret|password|passwd|token|api_?key|auth|credential|cookie|private", re.IGNORECASE)


def escaped(text: str) -> str:
    """Text as Slack's mrkdwn shows it literally: its three control characters escaped."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def call_value(call: Call, binding: str) -> str:
    return json.dumps({"call": call.pk, "binding": binding})


def read_value(value) -> tuple[int, str] | None:
    """(call id, binding) from a button's or a modal's value, None when it is not one of ours."""
    try:
        data = json.loads(value)
    except (TypeError, ValueError):
        return None
    if not isinstance(data, dict) or type(data.get("call")) is not int or not isinstance(data.get("binding"), str):
        return None
    return data["call"], data["binding"]


def call_url(call: Call) -> str:
    return settings.CONSOLE_URL + reverse("call", args=[call.pk]) if settings.CONSOLE_URL else ""


def arguments_text(arguments) -> str:
    if not isinstance(arguments, dict):
        return ""
    shown = [(name, value) for name, value in arguments.items() if not SECRET_NAME.search(str(name))]
    lines = []
    for name, value in shown[:SHOWN_ARGUMENTS]:
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        cut = text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"
        lines.append(f"• `{escaped(str(name))[:60]}`: {escaped(cut)}")
    more = len(arguments) - len(lines)
    return "\n".join(lines + ([f"…and {more} more"] if more > 0 else []))


def outcome_text(call: Call) -> str:
    """What became of the call, and by whom."""
    if call.status == Call.Status.PENDING:
        waiting = "Waits for approval"
        return waiting + (f" ({deciding.approvals_text(call)})" if call.approvals_needed > 1 else "")
    who = call.decided_by_name
    if call.status == Call.Status.DENIED:
        by = "by policy" if who == "policy" or not who else f"by {escaped(who)}"
        return f":no_entry: Denied {by}" + (f": {escaped(call.reason)}" if call.reason else "")
    if call.decided_by_name and call.status not in Call.CUT_SHORT:
        # A quorum's approvers, each in the order they approved; the last one's approval ran the call.
        names = deciding.approvers(call) if call.approvals_needed > 1 else [who]
        return f":white_check_mark: Approved by {escaped(', '.join(names or [who]))}"
    return f"{call.get_status_display()}" + (f": {escaped(call.reason)}" if call.reason else "")


def message(call: Call) -> tuple[str, list[dict], str]:
    """(text, blocks, binding) of the call's message as it stands."""
    client = call.token.name
    where = f" on *{escaped(call.server.name)}*" if call.server_id else ""
    outcome = outcome_text(call)
    headline = f"*{escaped(call.tool_name)}* from *{escaped(client)}*{where}: {outcome}"
    details = arguments_text(call.final_arguments)
    binding = call_binding(call)
    blocks = [
        {"type": "section", "text": {"type": "mrkdwn", "text": headline + (f"\n{details}" if details else "")}},
        {"type": "context", "elements": [{"type": "mrkdwn", "text": f"Call {call.pk} · binding {binding[:12]}"}]},
    ]
    buttons = []
    if call.status == Call.Status.PENDING:
        value = call_value(call, binding)
        buttons = [
            button("approve", "Approve", value=value, style="primary"),
            button("deny", "Deny", value=value, style="danger"),
        ]
    if call_url(call):
        buttons.append(button("open", "Open", url=call_url(call)))
    if buttons:
        blocks.append({"type": "actions", "block_id": f"call-{call.pk}", "elements": buttons})
    text = f"{call.tool_name} from {client}: {outcome}"
    return text, blocks, binding


def button(action_id: str, label: str, style: str = "", **fields) -> dict:
    found = {"type": "button", "action_id": action_id, "text": {"type": "plain_text", "text": label}, **fields}
    return found | ({"style": style} if style else {})


def deny_modal(value: str, where: dict) -> dict:
    """The modal Deny opens, asking a reason; its metadata carries the call and binding as the message showed them."""
    return {
        "type": "modal",
        "callback_id": "deny",
        "private_metadata": json.dumps({**json.loads(value), **where}),
        "title": {"type": "plain_text", "text": "Deny the call"},
        "submit": {"type": "plain_text", "text": "Deny"},
        "close": {"type": "plain_text", "text": "Cancel"},
        "blocks": [
            {
                "type": "input",
                "block_id": "reason",
                "label": {"type": "plain_text", "text": "Reason, told to the client"},
                "element": {"type": "plain_text_input", "action_id": "reason", "multiline": True, "max_length": 500},
            }
        ],
    }
