"""Filters and tags for the console's pages; upstream text always leaves them unmarked, so autoescape applies."""

import json
from datetime import timedelta

from django import template
from django.utils import timezone
from django.utils.timesince import timesince

from approvals import roles
from approvals.catalog import review
from approvals.display.schema import schema_table as describe_schema
from approvals.protocol import tool_review
from approvals.protocol.tools import annotations, safe_icons

register = template.Library()

SUMMARY_LINES = 3
SUMMARY_CHARS = 280
ICON_SIZE = 32
# The four hints of the spec, as badges: (hint, label when true, whether true is the cautious reading).
HINTS = [
    ("readOnlyHint", "read-only", False),
    ("destructiveHint", "destructive", True),
    ("idempotentHint", "idempotent", False),
    ("openWorldHint", "open-world", True),
]


@register.filter
def is_admin(user):
    return roles.is_admin(user)


register.filter("has_role", roles.has_role)


@register.filter
def first_lines(text):
    """The opening of a description: a few lines, a few hundred characters."""
    lines = str(text or "").strip().splitlines()
    summary = "\n".join(lines[:SUMMARY_LINES])
    if len(summary) > SUMMARY_CHARS:
        return summary[: SUMMARY_CHARS - 1].rstrip() + "…"
    return summary + ("\n…" if len(lines) > SUMMARY_LINES else "")


@register.filter
def ago(when):
    if timezone.now() - when < timedelta(minutes=1):
        return "just now"
    return f"{timesince(when)} ago"


@register.filter
def as_json(value):
    return json.dumps(value, indent=2, ensure_ascii=False)


@register.simple_tag
def review_count():
    return review.review_count()


@register.filter
def revealed(text):
    """Upstream text with its invisible characters written out; still unmarked, so autoescape applies."""
    return tool_review.reveal(str(text))


@register.filter
def brief_json(value):
    return tool_review.brief_json(value)


@register.simple_tag
def annotation_badges(tool):
    """Badges for the hints that hold; destructive only means something when a tool is not read-only."""
    hints = annotations(tool.definition)
    badges = []
    for hint, label, cautious in HINTS:
        if not hints.get(hint) or (hint == "destructiveHint" and hints.get("readOnlyHint")):
            continue
        badges.append({"label": label, "cautious": cautious, "verified": tool.server.trusted})
    return badges


@register.simple_tag
def tool_icons(tool):
    return [{"src": icon["src"], "size": ICON_SIZE} for icon in safe_icons(tool.definition)]


@register.inclusion_tag("approvals/_schema_table.html")
def schema_table(schema, caption):
    return {"table": describe_schema(schema), "caption": caption}
