"""The audit report page: a period's decisions, latency, expired calls, rule hits and reviews, with charts."""

from django.shortcuts import render

from approvals.audit_log import report, timeline
from approvals.display.charts import bar_chart, duration, stacked_columns
from approvals.views.decorators import permission_or_403

BUCKET_LABELS = {"hour": ("hour", "%H:%M"), "day": ("day", "%b %d"), "month": ("month", "%Y-%m")}


@permission_or_403("approvals.view_auditevent")
def audit_report(request):
    period = report.ReportPeriod(request.GET)
    if not period.is_valid():
        return render(request, "approvals/audit_report.html", {"form": period}, status=400)
    built = report.build(period.cleaned_data["since"], period.cleaned_data["until"])
    context = {"form": period.shown(), "report": built, "charts": charts(built)}
    return render(request, "approvals/audit_report.html", context)


def charts(built: report.Report) -> list:
    def totals(title, key):
        rows = built.totals(key)
        # Outcomes wear the colours the rest of the console gives them; other totals keep the series' colour.
        colours = [f"outcome-{name}" for name, _ in rows] if key == "outcome" else None
        return bar_chart(
            title, [name for name, _ in rows], [("decisions", [count for _, count in rows])], colours=colours
        )

    size, starts, counts = timeline.over_time(built.since, built.until)
    unit, shown = BUCKET_LABELS[size]
    latency = built.latency
    return [
        stacked_columns(f"Decisions per {unit}, by outcome", [start.strftime(shown) for start in starts], counts),
        totals("Decisions by outcome", "outcome"),
        totals("Decisions by operator", "operator"),
        totals("Decisions by tool", "tool"),
        totals("Decisions by client", "client"),
        bar_chart(
            "Approval latency by tool",
            [row["tool"] for row in latency],
            [("median", [row["median_seconds"] for row in latency]), ("p95", [row["p95_seconds"] for row in latency])],
            value_text=duration,
        ),
        bar_chart(
            "Rule hits",
            [f"{row['rule']} ({row['decided']})" for row in built.rule_hits],
            [("calls", [row["count"] for row in built.rule_hits])],
        ),
        bar_chart(
            "Calls expired unanswered, by tool and client",
            [f"{row['tool']} · {row['client']}" for row in built.expired],
            [("calls", [row["count"] for row in built.expired])],
        ),
    ]
