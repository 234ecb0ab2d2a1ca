"""A call's argument values as the conditions a rule like it may keep, and the call as the policy's Try page takes it.

Values too long to show as a checkbox are left out, not cut: a cut value would be a condition no call meets.
"""

import json
from urllib.parse import urlencode

from django.urls import reverse

from approvals.calls.models import Call

MAX_CONDITIONS = 20
MAX_TEXT = 200
MAX_DEPTH = 4
# Arguments longer than this as JSON are not put in a link to the Try page: paste them there.
MAX_LINKED = 4000


def conditions(arguments, prefix: str = "", depth: int = 0) -> list[dict]:
    """An `eq` condition for each scalar value in the arguments, by its dotted path; objects are gone into."""
    found = []
    if not isinstance(arguments, dict) or depth >= MAX_DEPTH:
        return found
    for key, value in arguments.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict):
            found += conditions(value, f"{path}.", depth + 1)
        elif (
            value is None
            or isinstance(value, bool | int | float)
            or (isinstance(value, str) and len(value) <= MAX_TEXT)
        ):
            found.append({"path": path, "op": "eq", "value": value})
    return found[:MAX_CONDITIONS]


def subject(call: Call) -> str:
    """What the rule's pattern names: the exposed tool or prompt, the agent's tool, or the URI read."""
    if call.kind == Call.Kind.RESOURCE:
        return str(call.arguments.get("uri", call.tool_name))
    return call.tool_name


def try_query(call: Call) -> str:
    """The Try page's URL with this call filled in, for the kinds it tries by name and arguments; "" otherwise."""
    if len(json.dumps(call.arguments)) > MAX_LINKED:
        return ""
    if call.kind == Call.Kind.TOOL:
        fields = {"token": call.token_id, "tool": call.tool_name, "arguments": json.dumps(call.arguments)}
    elif call.kind == Call.Kind.PERMISSION:
        fields = {
            "ask-token": call.token_id,
            "ask-agent_tool": call.tool_name,
            "ask-tool_input": json.dumps(call.arguments),
        }
    else:
        return ""
    return f"{reverse('policy_try')}?{urlencode(fields)}"
