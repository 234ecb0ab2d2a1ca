"""Filters and tags for the console's pages; upstream text always leaves them unmarked, so autoescape applies."""

import json

from django import template
from django.template.defaultfilters import pluralize
from django.utils import timezone

from approvals import roles
from approvals.catalog import review
from approvals.catalog.models import Server
from approvals.display import charts
from approvals.display.schema import schema_table as describe_schema
from approvals.protocol import hidden_text, tool_review
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


# One unit per age, the largest that fits: days up to two years ("in 30 days" reads better than "in 4 weeks").
# (from how many seconds, a unit of how many seconds, its name)
AGE_UNITS = [
    (2 * 365 * 86400, 365 * 86400, "year"),
    (2 * 86400, 86400, "day"),
    (3600, 3600, "hour"),
    (60, 60, "minute"),
]
# The pages the navigation's Admin menu leads to, by URL name: its summary is marked while one is open.
ADMIN_MENU_SECTIONS = frozenset(
    {
        *("servers", "server", "server_add", "server_edit", "connect", "account"),
        *("rules", "rule_add", "rule_edit", "rule_delete", "policy_try"),
        *("tokens", "token_add", "token_edit", "token_rotate", "token_revoke"),
        *("webhooks", "webhook", "webhook_add", "webhook_rotate", "webhook_delete"),
        *("audit", "audit_event", "audit_call", "audit_report"),
        "people",
    }
)


@register.filter
def in_admin_menu(section):
    return section in ADMIN_MENU_SECTIONS


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
    """How far a time is from now, either way: "3 minutes ago", "in 30 days", "just now" within a minute."""
    seconds = (when - timezone.now()).total_seconds()
    span = abs(seconds)
    if span < 60:
        return "just now"
    size, unit = next((size, unit) for start, size, unit in AGE_UNITS if span >= start)
    count = round(span / size)
    words = f"{count}\xa0{unit}{pluralize(count)}"  # a no-break space, as Django's timesince
    return f"in {words}" if seconds > 0 else f"{words} ago"


@register.filter
def as_json(value):
    return json.dumps(value, indent=2, ensure_ascii=False)


@register.simple_tag
def review_count():
    return review.review_count()


@register.filter
def revealed(text):
    """Upstream text with its invisible characters written out; still unmarked, so autoescape applies."""
    return hidden_text.reveal(str(text))


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


@register.inclusion_tag("approvals/_needs_authorization.html")
def needs_authorization_banner(user):
    """Admins see, on every page, the servers whose shared OAuth connection waits for someone to Connect it."""
    if not roles.is_admin(user):
        return {"servers": []}
    return {"servers": list(Server.objects.filter(health=Server.Health.NEEDS_AUTHORIZATION).only("name", "slug"))}


@register.filter
def seconds_duration(seconds) -> str:
    """A number of seconds in the unit that fits it: 850 ms, 12.4 s, 3.2 min."""
    return charts.duration(seconds)
