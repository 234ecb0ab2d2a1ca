"""The auditor's filter, keyset pages over it, and exports of exactly what it selects."""

import csv
import io
import json
from datetime import timedelta

import pytest
from django.utils import timezone

from approvals.audit import chain, checkpoints
from approvals.audit.models import AuditEvent, AuditHead
from approvals.audit_log import export, filters, query
from approvals.calls import deciding, lifecycle
from approvals.calls.models import Call
from approvals.policy.models import PolicyRule
from approvals.protocol import revisions
from approvals.tokens.context import ClientContext
from tests.audit.conftest import trigger_disabled
from tests.fixtures.catalog import make_server, make_tool


def submit(token, tool, arguments):
    call, _ = lifecycle.receive_call(ClientContext(token, revisions.MODERN, "2026-07-28"), tool, arguments, 1, None)
    return call


@pytest.fixture
def history(client_token, refund_tool, operators):
    """Refunds approved by ann and denied by bob, and a lookup on another server that policy allowed."""
    ann, bob = operators
    for order in range(1, 7):
        call = submit(client_token, refund_tool, {"order_id": order, "amount": 10 * order})
        deciding.decide(call.pk, ann if order % 2 else bob, bool(order % 2), "" if order % 2 else "not this one")
    lookup = make_tool(make_server("Records"), "lookup", inputSchema={"type": "object"})
    PolicyRule.objects.create(action="allow", tool_glob="records_*")
    submit(client_token, lookup, {"customer": "C-4711"})
    return {"refund": refund_tool, "lookup": lookup, "ann": ann, "bob": bob}


def event_rows(rows):
    return [row for row in rows[1:] if not row[0].startswith("#")]


def selected(**criteria):
    form = filters.AuditFilter(criteria)
    assert form.is_valid(), form.errors
    return query.filter_events(form.cleaned_data)


def actions(events):
    return sorted(events.values_list("action", flat=True))


def test_it_filters_by_tool_and_decision(history):
    denied = selected(tool=history["refund"].exposed_name, action="call.denied")
    assert denied.count() == 3 and set(denied.values_list("actor_name", flat=True)) == {"bob"}
    assert not selected(tool=history["lookup"].exposed_name, action="call.denied").exists()


def test_it_filters_by_operator(history):
    assert actions(selected(operator="ann")) == ["call.approved"] * 3


def test_it_filters_by_the_outcome_of_the_events_call(history):
    assert actions(selected(outcome="denied")) == sorted(
        ["call.received", "call.policy", "call.pending", "call.denied"] * 3
    )


def test_it_filters_by_client_and_server(history, client_token):
    by_client = selected(client=client_token.name)
    assert by_client.count() == AuditEvent.objects.exclude(call_id=None).count() + 1
    assert by_client.filter(action="token.created").exists()
    lookup = Call.objects.get(tool=history["lookup"])
    assert list(selected(server="records").order_by("seq")) == list(AuditEvent.objects.filter(call_id=lookup.pk))


def test_it_finds_free_text_in_arguments_reasons_answers_and_results(history):
    assert actions(selected(q="c-4711")) == ["call.forwarded", "call.received"]
    assert actions(selected(q="NOT THIS one")) == ["call.denied"] * 3
    assert not selected(q="nowhere at all").exists()


def test_it_finds_text_as_json_escapes_it(db):
    chain.record("call.denied", chain.SYSTEM, data={"reason": 'the "Zoë" account'})
    chain.record("call.denied", chain.SYSTEM, data={"reason": "another"})
    assert actions(selected(q='"zoë"')) == ["call.denied"]


def test_it_filters_by_time_range(history):
    with trigger_disabled():
        AuditEvent.objects.filter(seq__lte=4).update(at=timezone.now() - timedelta(days=3))
    since = (timezone.now() - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M")
    assert selected(since=since).count() == AuditEvent.objects.count() - 4
    assert selected(until=since).count() == 4


def test_it_pages_through_every_event_once_newest_first(history):
    events = selected(tool=history["refund"].exposed_name)
    seen, before = [], None
    while True:
        page = query.keyset_page(events, before=before, size=5)
        seen += [e.seq for e in page.events]
        if page.older is None:
            break
        before = page.older
    assert seen == sorted(events.values_list("seq", flat=True), reverse=True)
    back = query.keyset_page(events, after=seen[9], size=5)
    assert [e.seq for e in back.events] == seen[4:9] and back.newer == seen[4]


def test_it_exports_exactly_the_events_the_page_counts(history):
    for criteria in (
        {"tool": history["refund"].exposed_name, "action": "call.approved"},
        {"outcome": "denied"},
        {"q": "order_id"},
        {},
    ):
        form = filters.AuditFilter(criteria)
        assert form.is_valid()
        events = query.filter_events(form.cleaned_data)
        shown = query.bounded_count(events, form.cleaned_data)
        exported = list(csv.reader(io.StringIO("".join(export.export_chunks(events, "csv")))))
        rows = event_rows(exported)
        assert len(rows) == shown.count and not shown.more, criteria
        assert [int(row[0]) for row in rows] == sorted(events.values_list("seq", flat=True))


@pytest.mark.parametrize("name", ['=HYPERLINK("https://evil.example","x")', "+1+2", "-2+3", "@SUM(A1)", "\tx", "\rx"])
def test_it_exports_a_cell_a_spreadsheet_would_read_as_a_formula_as_text(db, name):
    event = chain.record("token.created", chain.Actor("client", 7, name), data={"name": name})
    chain.record("token.created", chain.Actor("client", 8, "ci-agent"), data={"name": "ci-agent"})

    rows = list(csv.reader(io.StringIO("".join(export.export_chunks(AuditEvent.objects.all(), "csv")))))

    names = [row[export.COLUMNS.index("actor_name")] for row in event_rows(rows)]
    assert names == ["'" + name, "ci-agent"]
    assert rows[1][export.COLUMNS.index("hash")] == event.hash


def test_it_ends_every_export_with_where_the_chain_starts_the_head_and_the_newest_checkpoint(history):
    signed = checkpoints.take()
    head = AuditHead.objects.get()
    rows = list(csv.reader(io.StringIO("".join(export.export_chunks(AuditEvent.objects.all(), "csv")))))
    assert rows[0] == export.COLUMNS
    assert rows[-3] == ["# public chain before", "0", AuditHead.GENESIS]
    assert rows[-2] == ["# chain head", str(head.seq), head.hash]
    assert rows[-1][:4] == ["# checkpoint", str(head.seq), head.public_hash, signed.at.isoformat()]
    lines = "".join(export.export_chunks(AuditEvent.objects.all(), "jsonl")).splitlines()
    assert json.loads(lines[-2]) == {"chain_head": {"seq": head.seq, "hash": head.hash}}
    assert json.loads(lines[-1])["checkpoint"] == checkpoints.as_dict(signed)
    first = json.loads(lines[0])
    stored = AuditEvent.objects.get(seq=first["seq"])
    assert first["data"] == stored.data and first["hash"] == stored.hash and first["at"] == stored.at.isoformat()
    assert first["public_hash"] == stored.public_hash


def test_it_counts_the_whole_log_from_the_head_without_reading_it(history, django_assert_max_num_queries):
    total = AuditEvent.objects.count()
    with django_assert_max_num_queries(1):
        assert query.bounded_count(AuditEvent.objects.all(), {}).count == total


@pytest.mark.postgres
def test_it_gives_up_counting_past_its_time_budget_and_restores_the_timeout(db, monkeypatch):
    from django.db import connection

    def slow():
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_sleep(0.5)")  # a count that outlasts the budget
        return 1

    monkeypatch.setattr(query, "COUNT_BUDGET_MS", 20)
    assert query.within_budget(slow) is None
    assert query.within_budget(lambda: 7) == 7
    with connection.cursor() as cursor:
        cursor.execute("SHOW statement_timeout")
        assert cursor.fetchone()[0] == "0"
