"""The audit report: decisions by who, what and how, approval latency, expired calls, rule hits and reviews,
as `audit_report` prints them (JSON, CSV) and as the report page shows them, with its charts."""

import csv
import io
import json
import re
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from approvals import roles
from approvals.audit.chain import Actor
from approvals.audit.models import AuditEvent
from approvals.audit_log import report, timeline
from approvals.calls import deciding, expiry, lifecycle
from approvals.calls.models import Call
from approvals.catalog import trust
from approvals.policy import rules
from approvals.protocol import revisions
from approvals.tokens.context import ClientContext
from tests.audit.conftest import trigger_disabled
from tests.fixtures.people import make_user


def held_for(call, seconds):
    """Backdate the call's hold, so its decision came `seconds` after it."""
    decided = AuditEvent.objects.filter(call_id=call.pk, action__in=report.DECIDED).get()
    with trigger_disabled():
        AuditEvent.objects.filter(call_id=call.pk, action="call.pending").update(
            at=decided.at - timedelta(seconds=seconds)
        )


@pytest.fixture
def period(client_token, refund_tool):
    """A call allowed by the rule "small", two approved by ann and one denied by bob, one expired, a tool accepted."""
    rules.create_rule(
        rules.RuleRequest(
            "allow", tool_glob="shop_*", conditions=[{"path": "amount", "op": "lt", "value": 100}], name="small"
        )
    )
    ann, bob = make_user("ann", roles.OPERATOR), make_user("bob", roles.OPERATOR)
    ctx = ClientContext(client_token, revisions.MODERN, "2026-07-28")

    def submit(amount, number):
        return lifecycle.receive_call(ctx, refund_tool, {"order_id": number, "amount": amount}, number, None)[0]

    submit(5, 1)
    approved = [submit(200, 2), submit(250, 3)]
    denied = submit(300, 4)
    for call, wait in zip(approved, (10, 30), strict=True):
        deciding.decide(call.pk, ann, True)
        held_for(call, wait)
    deciding.decide(denied.pk, bob, False, "too much")
    held_for(denied, 20)
    late = submit(400, 5)
    Call.objects.filter(pk=late.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert expiry.expire_stale_calls() == 1
    trust.record_decision("accepted", Actor.user(ann), refund_tool, "", "looked fine")
    return {"late": late}


def last_day():
    now = timezone.now()
    return now - timedelta(days=1), now + timedelta(minutes=1)


def test_it_sums_up_decisions_latency_expiry_rule_hits_and_reviews(period, client_token):
    built = report.build(*last_day())
    assert sorted((row["operator"], row["outcome"], row["count"]) for row in built.decisions) == [
        ("ann", "approved", 2),
        ("bob", "denied", 1),
        ("policy", "allowed", 1),
    ]
    assert {row["tool"] for row in built.decisions} == {"shop_issue_refund"}
    assert {row["client"] for row in built.decisions} == {client_token.name}
    assert built.totals("outcome") == [("approved", 2), ("allowed", 1), ("denied", 1)]
    assert built.latency == [{"tool": "shop_issue_refund", "decisions": 3, "median_seconds": 20.0, "p95_seconds": 30.0}]
    assert built.expired_total == 1 and built.expired_calls[0]["call_id"] == period["late"].pk
    assert sorted((row["rule"], row["decided"], row["count"]) for row in built.rule_hits) == [
        ("no rule matched: ask by default", "ask", 4),
        ("small", "allow", 1),
    ]
    assert [(row["kind"], row["verdict"], row["name"], row["server"]) for row in built.reviews] == [
        ("tool", "accepted", "shop_issue_refund", "Shop")
    ]


def test_it_leaves_out_what_happened_outside_the_period(period):
    now = timezone.now()
    built = report.build(now - timedelta(days=3), now - timedelta(days=2))
    assert (built.decisions, built.latency, built.expired, built.rule_hits, built.reviews) == ([], [], [], [], [])


def test_it_prints_the_report_as_json_and_csv(period):
    since, until = (moment.isoformat() for moment in last_day())
    out = io.StringIO()
    call_command("audit_report", "--since", since, "--until", until, stdout=out)
    printed = json.loads(out.getvalue())
    assert printed["latency"][0]["p95_seconds"] == 30.0 and len(printed["expired_calls"]) == 1

    out = io.StringIO()
    call_command("audit_report", "--since", since, "--until", until, "--format", "csv", stdout=out)
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    sections = {row["section"] for row in rows}
    assert sections == {"decisions", "latency", "expired", "expired_calls", "rule_hits", "reviews", "actions"}
    latency = next(row for row in rows if row["section"] == "latency")
    assert (latency["tool"], latency["median_seconds"], latency["p95_seconds"]) == ("shop_issue_refund", "20.0", "30.0")


def test_it_refuses_a_period_it_cannot_read(db):
    with pytest.raises(Exception, match="--since"):
        call_command("audit_report", "--since", "yesterday-ish", stdout=io.StringIO())


def test_it_shows_auditors_the_report_with_its_charts(period, login):
    page = login("auditor").get(reverse("audit_report"))
    assert page.status_code == 200
    html = page.content.decode()
    assert html.count("<svg") >= 4 and "cdn" not in html.lower()
    assert "shop_issue_refund" in html and "small" in html
    assert page.context["report"].expired_total == 1


def test_it_refuses_the_report_to_operators(db, login):
    assert login("operator").get(reverse("audit_report")).status_code == 403


def test_it_says_which_period_it_could_not_read(db, login):
    page = login("auditor").get(reverse("audit_report"), {"since": "not a time"})
    assert page.status_code == 400


def test_it_colours_the_outcomes_and_gives_waits_their_unit_on_the_page(period, login):
    html = login("auditor").get(reverse("audit_report")).content.decode()
    outcomes = re.search(r'aria-label="Decisions by outcome".*?</svg>', html, re.S).group()
    assert set(re.findall(r'<rect class="([^"]+)"', outcomes)) == {
        "outcome-approved",
        "outcome-denied",
        "outcome-allowed",
    }
    assert '<td class="num">20 s</td><td class="num">30 s</td>' in html


def test_it_counts_decisions_per_hour_of_a_day_by_outcome(period):
    since, until = last_day()
    size, starts, counts = timeline.over_time(since, until)
    assert size == "hour" and len(starts) == 25
    assert {name: sum(values) for name, values in counts.items()} == {"approved": 2, "denied": 1, "allowed": 1}
    assert counts["approved"][-1] == 2


def test_it_sizes_buckets_to_the_period():
    now = timezone.now()
    assert timeline.bucket_size(now - timedelta(days=1), now) == "hour"
    assert len(timeline.starts(now - timedelta(days=30), now, "day")) == 31
    assert timeline.bucket_size(now - timedelta(days=365), now) == "month"


def test_it_draws_decisions_over_time_by_outcome_on_the_page(period, login):
    html = login("auditor").get(reverse("audit_report"), {"preset": "30d"}).content.decode()
    chart = html.split("Decisions per day, by outcome</figcaption>")[1].split("</svg>")[0]
    assert re.findall(
        r'<rect class="outcome-(\w+)" x="[\d.]+" y="[\d.]+" width="[\d.]+" height="[\d.]+"><title>', chart
    )
    assert ": 2 approved</title>" in chart and ": 1 denied</title>" in chart and "<script" not in chart
