"""A period of the audit log summed up for auditors: the page, `audit_report` and its charts read this.

Every figure is aggregated by the database over the events of the period (`at` is indexed), so a
report costs a handful of grouped queries however long the log. Latency is an operator's decision
less the moment its call was held (its `call.pending` event); the median and the 95th percentile
are nearest-rank, picked by a window function rather than by reading every latency.
"""

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django import forms
from django.db.models import (
    Case,
    CharField,
    Count,
    DurationField,
    ExpressionWrapper,
    F,
    Max,
    OuterRef,
    Q,
    Subquery,
    TextField,
    Value,
    When,
    Window,
)
from django.db.models.fields.json import KT
from django.db.models.functions import Ceil, Coalesce, RowNumber
from django.utils import timezone

from approvals.audit.actions import ACTIONS
from approvals.audit.models import AuditEvent
from approvals.audit_log import periods
from approvals.audit_log.query import label
from approvals.catalog.models import Server, Tool
from approvals.tokens.models import ClientToken

DECIDED = ("call.approved", "call.denied")
REVIEWED = [
    f"{noun}.{verb}" for noun in ("tool", "resource", "template", "prompt") for verb in ("accepted", "rejected")
]
EXPIRED_LISTED = 100


@dataclass
class Report:
    since: datetime
    until: datetime
    decisions: list[dict] = field(default_factory=list)
    latency: list[dict] = field(default_factory=list)
    expired: list[dict] = field(default_factory=list)
    expired_calls: list[dict] = field(default_factory=list)
    rule_hits: list[dict] = field(default_factory=list)
    reviews: list[dict] = field(default_factory=list)
    actions: list[dict] = field(default_factory=list)

    def totals(self, key: str) -> list[tuple[str, int]]:
        """Decisions summed by one of operator, tool, client or outcome, most first."""
        sums: dict[str, int] = {}
        for row in self.decisions:
            sums[row[key]] = sums.get(row[key], 0) + row["count"]
        return sorted(sums.items(), key=lambda item: (-item[1], item[0]))

    @property
    def expired_total(self) -> int:
        return sum(row["count"] for row in self.expired)

    def as_dict(self) -> dict:
        return {
            "since": self.since.isoformat(),
            "until": self.until.isoformat(),
            "decisions": self.decisions,
            "latency": self.latency,
            "expired": self.expired,
            "expired_calls": [{**row, "at": row["at"].isoformat()} for row in self.expired_calls],
            "rule_hits": self.rule_hits,
            "reviews": [{**row, "last_at": row["last_at"].isoformat()} for row in self.reviews],
            "actions": self.actions,
        }


def build(since: datetime, until: datetime) -> Report:
    period = AuditEvent.objects.filter(at__gte=since, at__lt=until)
    report = Report(since, until)
    names = Names()
    report.decisions = decisions(period, names)
    report.latency = latency(period, names)
    report.expired, report.expired_calls = expired(period, names)
    report.rule_hits = rule_hits(period)
    report.reviews = reviews(period, names)
    report.actions = actions(period)
    names.fill(report)
    return report


class Names:
    """Tool, client and server ids seen while building, named in three queries at the end."""

    def __init__(self):
        self.tools, self.tokens, self.servers = set(), set(), set()

    def note(self, rows):
        for row in rows:
            self.tools.add(row.get("tool_id"))
            self.tokens.add(row.get("token_id"))
            self.servers.add(row.get("server_id"))
        return rows

    def fill(self, report: Report):
        tools = Tool.objects.in_bulk(self.tools - {None})
        tokens = ClientToken.objects.in_bulk(self.tokens - {None})
        servers = Server.objects.in_bulk(self.servers - {None})
        for rows in (report.decisions, report.latency, report.expired, report.expired_calls, report.reviews):
            for row in rows:
                if "tool_id" in row:
                    row["tool"] = label(tools, row.pop("tool_id")) or "—"
                if "token_id" in row:
                    row["client"] = label(tokens, row.pop("token_id")) or "—"
                if "server_id" in row:
                    row["server"] = label(servers, row.pop("server_id")) or "—"


def decided(period):
    """The decisions in a period: operators' approvals and denials, the policy's denials and calls it allowed."""
    return period.filter(Q(action__in=DECIDED) | Q(action="call.policy", data__action="allow"))


def outcome() -> Case:
    return Case(
        When(action="call.approved", then=Value("approved")),
        When(action="call.denied", then=Value("denied")),
        default=Value("allowed"),
        output_field=CharField(),
    )


def decisions(period, names) -> list[dict]:
    """Operators' approvals and denials, the policy's denials and its calls allowed, grouped by who, what and how."""
    operator = Case(When(actor_type="user", then=F("actor_name")), default=Value("policy"), output_field=CharField())
    rows = (
        decided(period)
        .values("tool_id", "token_id")
        .annotate(operator=operator, outcome=outcome())
        .values("operator", "tool_id", "token_id", "outcome")
        .annotate(count=Count("id"))
        .order_by("-count", "operator", "outcome")
    )
    return names.note([dict(row) for row in rows])


def latency(period, names) -> list[dict]:
    """Per tool: the operators' decisions, and the median and 95th percentile of their wait, in seconds."""
    held_at = AuditEvent.objects.filter(call_id=OuterRef("call_id"), action="call.pending").order_by("seq").values("at")
    waits = (
        period.filter(action__in=DECIDED, actor_type="user", call_id__isnull=False)
        .annotate(held_at=Subquery(held_at[:1]))
        .filter(held_at__isnull=False)
        .annotate(wait=ExpressionWrapper(F("at") - F("held_at"), output_field=DurationField()))
        .annotate(
            rank=Window(RowNumber(), partition_by=[F("tool_id")], order_by=[F("wait").asc(), F("seq").asc()]),
            decided=Window(Count("id"), partition_by=[F("tool_id")]),
        )
    )
    by_tool: dict = {}
    for name, share in (("median_seconds", 0.5), ("p95_seconds", 0.95)):
        for tool_id, decided, wait in waits.filter(rank=Ceil(F("decided") * share)).values_list(
            "tool_id", "decided", "wait"
        ):
            row = by_tool.setdefault(tool_id, {"tool_id": tool_id, "decisions": decided})
            row[name] = round(wait.total_seconds(), 3)
    return names.note(sorted(by_tool.values(), key=lambda row: -row["decisions"]))


def expired(period, names) -> tuple[list[dict], list[dict]]:
    """Calls that expired with no decision: counted by tool and client, and the latest of them listed."""
    events = period.filter(action="call.expired")
    counts = events.values("tool_id", "token_id").annotate(count=Count("id")).order_by("-count")
    latest = events.order_by("-seq").values("seq", "at", "call_id", "tool_id", "token_id")[:EXPIRED_LISTED]
    return names.note([dict(row) for row in counts]), names.note([dict(row) for row in latest])


def rule_hits(period) -> list[dict]:
    """How often each rule decided a call, and how (a call no rule matched names the default)."""
    rows = (
        period.filter(action="call.policy")
        .values(rule=Coalesce(KT("data__rule"), Value(""), output_field=TextField()), decided=KT("data__action"))
        .annotate(count=Count("id"))
        .order_by("-count", "rule")
    )
    return [dict(row) for row in rows]


def reviews(period, names) -> list[dict]:
    """Definitions accepted or rejected in review: by kind, name and server, how often and when last."""
    rows = (
        period.filter(action__in=REVIEWED)
        .values(
            "action",
            "server_id",
            name=Coalesce(
                KT("data__tool"),
                KT("data__resource"),
                KT("data__template"),
                KT("data__prompt"),
                output_field=TextField(),
            ),
        )
        .annotate(count=Count("id"), last_at=Max("at"))
        .order_by("-last_at")
    )
    found = []
    for row in rows:
        kind, verdict = row.pop("action").split(".")
        found.append({**row, "kind": kind, "verdict": verdict})
    return names.note(found)


def actions(period) -> list[dict]:
    """Every action the log may record, what it means and how many events of it the period has, none left out."""
    counts = dict(period.order_by().values_list("action").annotate(count=Count("id")))
    return [
        {"action": action, "description": description, "count": counts.get(action, 0)}
        for action, description in ACTIONS.items()
    ]


CSV_COLUMNS = [
    "section",
    "operator",
    "tool",
    "client",
    "server",
    "outcome",
    "count",
    "decisions",
    "median_seconds",
    "p95_seconds",
    "rule",
    "decided",
    "kind",
    "verdict",
    "name",
    "seq",
    "call_id",
    "at",
    "last_at",
    "action",
    "description",
]


def csv_rows(report: Report):
    """Every row of every table, named by its section, under one header (CSV_COLUMNS)."""
    for section, rows in report.as_dict().items():
        if isinstance(rows, list):
            for row in rows:
                yield {"section": section, **row}


PICKER = {"type": "datetime-local", "step": "1"}
PICKER_FORMAT = "%Y-%m-%dT%H:%M:%S"


class ReportPeriod(forms.Form):
    """The period of a report, in UTC: a preset, else the dates given, else the last day."""

    preset = periods.preset_field()
    since = forms.DateTimeField(
        required=False, label="From (UTC)", widget=forms.DateTimeInput(PICKER, format=PICKER_FORMAT)
    )
    until = forms.DateTimeField(
        required=False, label="Until (UTC)", widget=forms.DateTimeInput(PICKER, format=PICKER_FORMAT)
    )

    def clean(self):
        data = super().clean()
        if data.get("preset"):
            since, until = periods.resolve(data["preset"], timezone.now())
            return {"preset": data["preset"], "since": since, "until": until}
        until = data.get("until") or timezone.now()
        since = data.get("since") or until - timedelta(days=1)
        if since >= until:
            raise forms.ValidationError("The period must start before it ends.")
        return {"preset": "", "since": since, "until": until}

    def shown(self) -> "ReportPeriod":
        """A form showing the period this one stands for, the defaults filled in."""
        return ReportPeriod(initial=self.cleaned_data)
