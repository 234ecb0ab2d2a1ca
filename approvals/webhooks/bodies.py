"""The bytes a delivery posts: the event as stored, or for a Slack-compatible endpoint one line of text with a link."""

import json


def body(payload: dict, slack: bool) -> str:
    content = {"text": slack_text(payload)} if slack else payload
    return json.dumps(content, separators=(",", ":"), ensure_ascii=False)


def slack_text(payload: dict) -> str:
    data = payload.get("data", {})
    link = f"<{data.get('url', '')}|{LINK_WORDS.get(payload.get('type'), 'open it')}>"
    return f"{describe(payload.get('type', ''), data)}: {link}"


# tool.needs_review's lists: the tools, then the resources, templates and prompts (by kind label) when there are any.
REVIEWED_KEYS = ("tools", "resources", "resource_templates", "prompts")
LINK_WORDS = {
    "call.pending": "decide it",
    "call.escalated": "decide it",
    "input.requested": "answer it",
    "tool.needs_review": "review them",
    "audit.verification_failed": "open the audit log",
    "server.needs_authorization": "connect it",
}


def describe(event_type: str, data: dict) -> str:
    call = data.get("call", {})
    the_call = f"Call {call.get('id')} to `{escape(call.get('tool', ''))}` from {escape(call.get('client', ''))}"
    if event_type == "call.pending":
        return f"{the_call} waits for a decision"
    if event_type == "call.decided":
        return f"{the_call} was {call.get('status')} by {escape(call.get('decided_by', ''))}"
    if event_type == "call.escalated":
        return f"{the_call} expires soon undecided"
    if event_type == "call.finished":
        return f"{the_call} ended: {call.get('status')}"
    if event_type == "input.requested":
        return f"{the_call} asks for input"
    if event_type == "tool.needs_review":
        names = [name for key in REVIEWED_KEYS for name in data.get(key, [])]
        listed = ", ".join(f"`{escape(name)}`" for name in names)
        return f"Definitions of {escape(data.get('server', {}).get('name', ''))} wait for review: {listed}"
    if event_type == "webhook.test":
        return escape(data.get("message", "A test event"))
    if event_type == "audit.verification_failed":
        return f"Verifying the audit log failed: {escape(data.get('verification', {}).get('problem', ''))}"
    if event_type == "server.needs_authorization":
        whose = f"{escape(data['user'])}'s connection to " if data.get("user") else ""
        return (
            f"{whose}{escape(data.get('server', {}).get('name', ''))} needs authorization: {escape(data.get('reason'))}"
        )
    return escape(event_type)


def escape(text) -> str:
    """Slack reads &, < and > as markup: a tool name must not become a link or a mention."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
