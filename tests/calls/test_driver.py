"""A batch's statements on the driver's cursor (approvals.driver): as through Django's cursor, at less cost."""

from datetime import UTC, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from django.db import DatabaseError, IntegrityError, connection, transaction
from django.db.backends import utils
from django.db.transaction import TransactionManagementError
from django.test.utils import CaptureQueriesContext

from approvals import driver
from approvals.audit import verify
from approvals.audit.models import AuditEvent, AuditHead
from approvals.calls import batched_writes, ending, lifecycle
from approvals.calls.models import Call
from approvals.policy.models import PolicyRule
from approvals.protocol import revisions
from approvals.tokens.context import ClientContext

pytestmark = pytest.mark.django_db

HEAD = f"SELECT seq FROM {AuditHead._meta.db_table} WHERE id = %s"
# The head's row again: refused, its key taken.
SECOND_HEAD = f"INSERT INTO {AuditHead._meta.db_table} (id, seq, hash, public_hash) VALUES (1, 0, '', '')"


def an_arrival_and_its_result(token, tool) -> Call:
    ctx = ClientContext(token, revisions.MODERN, "2026-07-28")
    [((call, _), error)] = batched_writes.write_together(
        [lambda: lifecycle.receive_call(ctx, tool, {"order_id": 1, "amount": 5}, 1, None)]
    )
    assert error is None
    [(_, error)] = batched_writes.write_together(
        [lambda: ending.record_result(call, Call.Status.COMPLETED, {"content": []}, "")]
    )
    assert error is None
    return call


class Undone(Exception):
    """What rolls a test's transaction back."""


def round_trips(monkeypatch, folder) -> list[int]:
    """The round trips to the server of each write_together from now on, as libpq's trace of its connection
    shows them: each ends with the server's ReadyForQuery."""
    counted = []
    write_together = batched_writes.write_together

    def traced(works):
        connection.ensure_connection()
        pgconn = connection.connection.pgconn
        path = folder / f"trace-{len(counted)}"
        with path.open("w") as trace:
            pgconn.trace(trace.fileno())
            try:
                outcomes = write_together(works)
            finally:
                pgconn.untrace()
        counted.append(path.read_text().count("\tReadyForQuery\t"))
        return outcomes

    monkeypatch.setattr(batched_writes, "write_together", traced)
    return counted


def through_djangos_cursor(monkeypatch) -> list[str]:
    seen = []
    execute = utils.CursorWrapper.execute

    def noting(cursor, sql, params=None):
        seen.append(sql)
        return execute(cursor, sql, params)

    monkeypatch.setattr(utils.CursorWrapper, "execute", noting)
    return seen


def test_it_writes_a_calls_row_and_audit_events_past_djangos_cursor(
    transactional_db, monkeypatch, client_token, refund_tool
):
    seen = through_djangos_cursor(monkeypatch)
    allowing = PolicyRule.objects.create(name="refunds", action="allow", tool_glob="shop_*")

    call = an_arrival_and_its_result(client_token, refund_tool)

    written = ("approvals_call", "approvals_auditevent", "approvals_audithead", "approvals_lookupstamp")
    assert [sql for sql in seen if any(table in sql for table in written)] == []
    call.refresh_from_db()
    assert (call.status, call.rule_id) == (Call.Status.COMPLETED, allowing.pk)
    assert list(AuditEvent.objects.filter(call_id=call.pk).order_by("seq").values_list("action", flat=True)) == [
        "call.received",
        "call.policy",
        "call.forwarded",
        "call.completed",
    ]


@pytest.mark.postgres
def test_it_writes_a_calls_arrival_and_its_result_in_four_round_trips_each(
    transactional_db, monkeypatch, tmp_path, client_token, refund_tool
):
    PolicyRule.objects.create(name="refunds", action="allow", tool_glob="shop_*")
    # The first call reads the rules, which are kept for the next (db.kept).
    an_arrival_and_its_result(client_token, refund_tool)
    trips = round_trips(monkeypatch, tmp_path)

    call = an_arrival_and_its_result(client_token, refund_tool)

    # Each: the BEGIN with the kept stamp's read, the call's insert or update, the audit head's lock, and the
    # audit events' insert with the head's move and the COMMIT.
    assert trips == [4, 4]
    call.refresh_from_db()
    assert call.status == Call.Status.COMPLETED
    assert verify.verify_chain().ok


@pytest.mark.postgres
def test_it_commits_the_other_writes_of_a_batch_when_one_fails_in_the_database(
    transactional_db, client_token, refund_tool
):
    PolicyRule.objects.create(name="refunds", action="allow", tool_glob="shop_*")
    ctx = ClientContext(client_token, revisions.MODERN, "2026-07-28")

    def receive(order_id):
        return lifecycle.receive_call(ctx, refund_tool, {"order_id": order_id, "amount": 5}, order_id, None)

    @transaction.atomic
    def failing():
        receive(2)
        driver.execute(SECOND_HEAD, [])

    outcomes = batched_writes.write_together([lambda: receive(1), failing, lambda: receive(3)])

    assert [type(error) for _, error in outcomes] == [type(None), IntegrityError, type(None)]
    assert sorted(Call.objects.values_list("arguments__order_id", flat=True)) == [1, 3]
    assert AuditEvent.objects.filter(action="call.received").count() == 2
    verdict = verify.verify_chain()
    assert verdict.ok and AuditHead.objects.get(pk=1).seq == verdict.checked


MOVE_HEAD = f"UPDATE {AuditHead._meta.db_table} SET seq = 7 WHERE id = 1"


def test_it_commits_with_its_last_statement_only_a_transaction_of_its_own(transactional_db):
    # Held within a caller's transaction, then with a savepoint open in its own.
    with pytest.raises(Undone), transaction.atomic():
        with transaction.atomic(), driver.held():
            driver.execute(MOVE_HEAD, [], last=True)
        raise Undone()
    with pytest.raises(Undone), transaction.atomic(), driver.held():
        with transaction.atomic():
            driver.execute(MOVE_HEAD, [], last=True)
        raise Undone()

    assert AuditHead.objects.get(pk=1).seq == 0


def test_it_rolls_back_all_it_ran_since_its_first_statement(transactional_db):
    with pytest.raises(Undone), transaction.atomic(), driver.held():
        assert driver.fetch_one(HEAD, [1]) == (0,)
        driver.execute(MOVE_HEAD, [])
        raise Undone()

    assert AuditHead.objects.get(pk=1).seq == 0


def test_it_rolls_back_a_transaction_whose_first_statement_failed(transactional_db):
    with pytest.raises(DatabaseError), transaction.atomic(), driver.held():
        driver.fetch_one("SELECT nothing FROM nowhere", [])

    with transaction.atomic(), driver.held():
        assert driver.fetch_one(HEAD, [1]) == (0,)


def test_it_lets_whoever_captures_queries_see_every_statement(transactional_db, client_token, refund_tool):
    PolicyRule.objects.create(name="refunds", action="allow", tool_glob="shop_*")

    with CaptureQueriesContext(connection) as captured:
        call = an_arrival_and_its_result(client_token, refund_tool)

    statements = [query["sql"] for query in captured]
    assert sum(sql.startswith('INSERT INTO "approvals_call"') for sql in statements) == 1
    assert sum(sql.startswith('UPDATE "approvals_call"') and f'"id" = {call.pk}' in sql for sql in statements) == 1
    assert sum('INSERT INTO "approvals_auditevent"' in sql for sql in statements) == 2
    assert sum('FROM "approvals_lookupstamp"' in sql for sql in statements) == 2


def test_it_lets_an_execute_wrapper_see_every_statement():
    wrapped = []

    def noting(execute, sql, params, many, context):
        wrapped.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(noting), transaction.atomic(), driver.held():
        assert driver.fetch_one(HEAD, [1]) == (0,)

    assert HEAD in wrapped


def test_it_raises_djangos_errors_for_the_drivers():
    with transaction.atomic(), driver.held():
        with pytest.raises(IntegrityError) as duplicate, transaction.atomic():
            driver.execute(SECOND_HEAD, [])
        with pytest.raises(DatabaseError), transaction.atomic():
            driver.execute("SELECT nothing FROM nowhere", [])

    assert isinstance(duplicate.value.__cause__, connection.Database.IntegrityError)


def test_it_refuses_statements_once_its_transaction_must_roll_back():
    with transaction.atomic(), driver.held():
        with pytest.raises(IntegrityError), transaction.atomic(savepoint=False):
            driver.execute(SECOND_HEAD, [])

        with pytest.raises(TransactionManagementError):
            driver.fetch_one(HEAD, [1])


def test_it_holds_nothing_outside_a_transaction(transactional_db, monkeypatch):
    seen = through_djangos_cursor(monkeypatch)

    with driver.held():
        assert driver.fetch_one(HEAD, [1]) == (0,)

    assert seen == [HEAD]


def test_it_leaves_a_transaction_whose_connection_closed_to_djangos_refusal(transactional_db):
    with transaction.atomic():
        connection.close()
        with driver.held(), pytest.raises(DatabaseError):
            driver.fetch_one(HEAD, [1])


@pytest.mark.parametrize(
    "moment",
    [
        datetime(2026, 11, 29, 16, 5, 7, 123456, tzinfo=UTC),
        datetime(2026, 11, 29, 16, 5, 7, tzinfo=UTC),
        datetime(2026, 11, 29, 18, 5, 7, 5, tzinfo=timezone(timedelta(hours=2))),
        datetime(2026, 3, 29, 2, 30, tzinfo=ZoneInfo("Europe/Paris")),
    ],
)
def test_it_adapts_a_time_as_the_backend_does(moment):
    assert driver.moment(connection.ops, moment) == connection.ops.adapt_datetimefield_value(moment)
