"""The append written out (audit.chain.append): a batch's events in one INSERT, rows as the ORM would write them."""

import functools

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from approvals.audit import chain, encoding, verify
from approvals.audit.models import AuditEvent, AuditHead
from approvals.calls import batched_writes, ending, lifecycle
from approvals.calls.models import Call
from approvals.policy.models import PolicyRule
from approvals.protocol import revisions
from approvals.tokens.context import ClientContext

CALLS = 5
# What JSON columns get wrong most easily: non-ASCII, a line separator, escapes, nesting, numbers of each kind.
ODD = {
    "text": 'Zoë ☕ said "no"\u2028twice \\ \t',
    "nested": {"list": [1, 2.5, None, True, {"deep": ["é", {}]}], "empty": []},
    "big": 10**20,
    "negative": -0.5,
    "日本": "キー",
}


def inserts_of_events(captured: CaptureQueriesContext) -> int:
    insert = "INSERT INTO " + connection.ops.quote_name(AuditEvent._meta.db_table)
    return sum(insert in query["sql"] for query in captured.captured_queries)


def raw_rows(seqs) -> list[tuple]:
    """The rows as the database driver gives them back, before any field's conversion."""
    columns = ", ".join(connection.ops.quote_name(name) for name in (*encoding.HASHED[1:], "hash", "public_hash"))
    table = connection.ops.quote_name(AuditEvent._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {columns} FROM {table} WHERE seq IN (%s, %s) ORDER BY seq", list(seqs))
        return cursor.fetchall()


@pytest.mark.django_db(transaction=True)
def test_it_appends_the_events_of_a_batch_of_calls_in_chain_order_with_one_insert(client_token, refund_tool):
    PolicyRule.objects.create(name="refunds", action="allow", tool_glob="shop_*")
    ctx = ClientContext(client_token, revisions.MODERN, "2026-07-28")
    head = AuditHead.objects.get(pk=1).seq

    with CaptureQueriesContext(connection) as arriving:
        arrivals = batched_writes.write_together(
            [
                functools.partial(lifecycle.receive_call, ctx, refund_tool, {"order_id": n, "amount": 5}, n, None)
                for n in range(CALLS)
            ]
        )
    calls = [call for (call, _), error in arrivals if error is None]
    result = {"content": [{"type": "text", "text": "refunded, naïvely"}]}
    with CaptureQueriesContext(connection) as answering:
        batched_writes.write_together(
            [functools.partial(ending.record_result, call, Call.Status.COMPLETED, result, "") for call in calls]
        )

    assert len(calls) == CALLS
    assert (inserts_of_events(arriving), inserts_of_events(answering)) == (1, 1)
    events = list(AuditEvent.objects.filter(seq__gt=head).values_list("seq", "call_id", "action"))
    arrived = [(c.pk, action) for c in calls for action in ("call.received", "call.policy", "call.forwarded")]
    assert [(call_id, action) for _, call_id, action in events] == [
        *arrived,
        *((c.pk, "call.completed") for c in calls),
    ]
    assert [seq for seq, _, _ in events] == list(range(head + 1, head + 4 * CALLS + 1))
    verdict = verify.verify_chain()
    assert verdict.ok and verdict.last_seq == head + 4 * CALLS, verdict.summary()


@pytest.mark.django_db
def test_it_writes_an_event_as_the_orm_would_and_reads_back_what_it_hashed():
    with transaction.atomic(), chain.batch():
        event = chain.record("server.changed", chain.Actor("user", 3, "Zoë"), data=ODD, request_id="r-1")
        chain.record("server.changed", chain.SYSTEM, data={"after": True})
    fields = {name: getattr(event, name) for name in (*encoding.HASHED, "hash", "public_hash")}
    # The same values through Django's model machinery, under a sequence number the chain will not reach.
    AuditEvent.objects.create(**(fields | {"seq": 10**12}))

    mine, orms = raw_rows([event.seq, 10**12])
    assert mine == orms
    stored = AuditEvent.objects.get(seq=event.seq)
    assert stored.data == ODD and stored.at == event.at
    assert encoding.encode_event(encoding.hashed_row(stored)) == encoding.encode_event(encoding.hashed_row(event))
    assert encoding.event_hash(encoding.hashed_row(stored)) == stored.hash == event.hash
