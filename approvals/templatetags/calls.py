"""Tags for the queue, the recent calls and a call's page; upstream text leaves them unmarked, so autoescape applies."""

import functools

from django import template
from django.urls import get_script_prefix, reverse
from django.utils import timezone
from django.utils.html import format_html

from approvals import roles
from approvals.calls import agent_tools, deciding, lifecycle, taking, tasks
from approvals.display import charts, like_this, permissions, queue, results, risk, rows, timeline, values
from approvals.views.consumers import LIVE_PATH

register = template.Library()
# What only passes its argument on is registered as the function it would call.
register.filter("can_decide", roles.can_decide)
register.filter("can_view_calls", roles.can_view_calls)
register.filter("binding", lifecycle.call_binding)
register.filter("approvals_text", deciding.approvals_text)
register.filter("task_status", tasks.status_of)
register.simple_tag(deciding.approval_refusal, name="approval_refusal")
register.filter("outcome", timeline.outcome_text)
register.simple_tag(values.value_tree, name="value_tree")
register.simple_tag(timeline.call_timeline, name="call_timeline")
register.simple_tag(timeline.trace_id, name="call_trace_id")
register.simple_tag(rows.pending_count, name="pending_count")
register.simple_tag(permissions.permission_view, name="permission_view")
register.filter("read_only", queue.read_only)
register.filter("risk", risk.call_risk)
register.filter("arguments_line", queue.arguments_line)
register.filter("upstream_identity", queue.upstream_identity)
register.simple_tag(like_this.try_query, name="try_like")
register.filter("may_release", taking.may_release)


# An id no call has, standing in for the call's while its URL is reversed.
NO_CALL = 10**18


@functools.cache
def around_call_id(name: str, prefix: str) -> tuple[str, str]:
    before, after = reverse(name, args=[NO_CALL]).split(str(NO_CALL))
    return before, after


@register.simple_tag
def call_url(name: str, call_id) -> str:
    """{% url name call_id %} for a URL taking a call's id alone; the URL map is walked once per name, not per row."""
    before, after = around_call_id(name, get_script_prefix())
    return f"{before}{int(call_id)}{after}"


@register.filter
def tool_changed(call):
    """Whether the call's tool is gone or its definition changed since the call was made.

    Approving such a call runs nothing.
    """
    if call.kind != call.Kind.TOOL:
        return False
    return call.tool is None or call.tool.digest != call.tool_digest or call.tool.status != call.tool.Status.ACTIVE


register.filter("input_schema", agent_tools.input_schema)


@register.filter
def output_schema(call):
    return (call.tool.definition if call.tool else {}).get("outputSchema")


@register.filter
def duration(milliseconds):
    """A number of milliseconds in the unit that fits it, as the report gives its waits."""
    return "" if milliseconds is None else charts.duration(milliseconds / 1000)


@register.filter
def seconds_left(when):
    return max(0, round((when - timezone.now()).total_seconds())) if when else 0


@register.filter
def seconds_since(when):
    return max(0, round((timezone.now() - when).total_seconds())) if when else 0


@register.filter
def clock(seconds):
    """A short count: 45s, 3m 05s, 1h 02m."""
    minutes, seconds = divmod(int(seconds), 60)
    if not minutes:
        return f"{seconds}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m" if hours else f"{minutes}m {seconds:02d}s"


@register.simple_tag
def result_blocks(call):
    return results.result_blocks(call.result)


@register.simple_tag
def structured_tree(call):
    return results.structured_tree(call.result, output_schema(call))


@register.simple_tag(takes_context=True)
def live_attributes(context, query=""):
    """The body's attributes the page's script opens its socket by: the websocket path, with what this page shows
    (view=queue, ...), and on a live page the mark of what it was rendered from (views/decorators.live_page)."""
    path = f"/{LIVE_PATH}?{query}" if query else f"/{LIVE_PATH}"
    since = getattr(context.get("request"), "live_since", None)
    if since is None:
        return format_html(' data-live-path="{}"', path)
    return format_html(' data-live-path="{}" data-live-since="{}"', path, since)
