"""What a held call costs its process while it waits, and how held calls are written and cancelled in bulk."""

import asyncio
import threading

import pytest
from channels.layers import get_channel_layer
from django.db import OperationalError, connection, transaction
from django.db.backends.base.base import BaseDatabaseWrapper
from django.test.utils import CaptureQueriesContext

from approvals.audit.models import AuditEvent, AuditHead
from approvals.calls import batched_writes, holding, lifecycle, runner
from approvals.calls.models import Call
from approvals.live import events
from approvals.protocol import revisions
from approvals.tokens.context import ClientContext
from approvals.webhooks import endpoints
from approvals.webhooks.models import WebhookDelivery
from tests.calls.held import as_a_request, none_but_the_shared_threads
from tests.fixtures.people import make_user
from tests.fixtures.waiting import eventually

pytestmark = pytest.mark.django_db(transaction=True)

HELD = 20
# Far longer than a cancelled request takes to end, its call cancelled; far shorter than any timeout or lease.
CUT_SECONDS = 5
PARAMS = {"name": "shop_issue_refund", "arguments": {"order_id": 7, "amount": 20}}


async def nowhere(message):
    pass


def context(token):
    return ClientContext(token, revisions.MODERN, "2026-07-28")


def receiving(token, tool):
    """A batch's works: one receiving a call for order `order_id`, and one receiving a call and failing."""

    def receive(order_id):
        return lifecycle.receive_call(context(token), tool, {"order_id": order_id, "amount": 5}, 1, None)

    @transaction.atomic
    def failing():
        receive(3)
        raise ValueError("no")

    return receive, failing


async def held(token, count: int) -> list[asyncio.Task]:
    """`count` calls waiting for a decision, each in a request of its own."""
    tasks = [
        asyncio.create_task(as_a_request(runner.run_call(context(token), n, PARAMS, nowhere))) for n in range(count)
    ]
    await eventually(lambda: len(holding.loop_held().waiting) == count, timeout=30, message=f"{count} calls waiting")
    return tasks


async def test_it_keeps_no_thread_and_no_connection_for_a_call_while_it_waits(
    client_token, refund_tool, open_connections
):
    before = threading.active_count()

    waiting = await held(client_token, HELD)

    # Each lets go once it has found its call still pending.
    await eventually(lambda: none_but_the_shared_threads(open_connections()), message="every connection given back")
    # The loop's own shared threads (renewing leases, writing calls) may start meanwhile, but no thread per call.
    assert threading.active_count() < before + HELD / 2
    for task in waiting:
        task.cancel()
    _, still_running = await asyncio.wait(waiting, timeout=CUT_SECONDS)
    assert not still_running, f"{len(still_running)} requests still running {CUT_SECONDS}s after they were cancelled"
    statuses = [status async for status in Call.objects.values_list("status", flat=True)]
    assert statuses == [Call.Status.CANCELLED] * HELD


@pytest.mark.sqlite  # a pooled database hands its connections round
async def test_it_opens_a_connection_per_shared_thread_not_per_call_on_sqlite(client_token, refund_tool, monkeypatch):
    opened = []
    connect = BaseDatabaseWrapper.connect
    monkeypatch.setattr(BaseDatabaseWrapper, "connect", lambda self: opened.append(1) or connect(self))

    waiting = await held(client_token, HELD)

    assert len(opened) < HELD / 2
    for task in waiting:
        task.cancel()
    await asyncio.gather(*waiting, return_exceptions=True)


async def test_it_cancels_every_call_whose_request_was_cut_short_and_gives_back_every_connection(
    client_token, refund_tool, open_connections
):
    waiting = await held(client_token, HELD)
    await eventually(
        lambda: none_but_the_shared_threads(open_connections()), message="every waiting call let go of its connection"
    )

    # The client left: its stream's task is cancelled; daphne, tired of waiting, cancels it again.
    for task in waiting:
        task.cancel()
    await asyncio.sleep(0)
    for task in waiting:
        task.cancel()
    await asyncio.gather(*waiting, return_exceptions=True)

    async def all_cancelled():
        return await Call.objects.filter(status=Call.Status.CANCELLED).acount() == HELD

    await eventually(all_cancelled, timeout=30, message="every call cancelled")
    assert await AuditEvent.objects.filter(action="call.cancelled").acount() == HELD
    await eventually(lambda: none_but_the_shared_threads(open_connections()), message="every connection given back")


async def test_it_records_a_burst_of_calls_in_a_few_transactions(client_token, refund_tool, monkeypatch):
    batches = []
    write_together = batched_writes.write_together
    monkeypatch.setattr(
        batched_writes, "write_together", lambda works: batches.append(len(works)) or write_together(works)
    )

    waiting = await held(client_token, HELD)

    assert sum(batches) == HELD
    assert len(batches) < HELD / 2
    for task in waiting:
        task.cancel()
    await asyncio.gather(*waiting, return_exceptions=True)


def test_it_keeps_the_other_writes_of_a_batch_when_one_fails(client_token, refund_tool):
    receive, failing = receiving(client_token, refund_tool)

    outcomes = batched_writes.write_together([lambda: receive(1), failing, lambda: receive(2)])

    assert [error is None for _, error in outcomes] == [True, False, True]
    assert sorted(Call.objects.values_list("arguments__order_id", flat=True)) == [1, 2]
    assert AuditEvent.objects.filter(action="call.received").count() == 2


def test_it_leaves_nothing_of_a_lone_write_that_fails_and_writes_the_next(client_token, refund_tool):
    receive, failing = receiving(client_token, refund_tool)
    head = AuditHead.objects.get(pk=1).seq

    ((_, error),) = batched_writes.write_together([failing])

    assert isinstance(error, ValueError)
    assert not Call.objects.exists()
    assert AuditHead.objects.get(pk=1).seq == head
    (((call, _), error),) = batched_writes.write_together([lambda: receive(1)])
    assert error is None
    assert list(AuditEvent.objects.filter(call_id=call.pk).values_list("seq", flat=True))[0] == head + 1


async def test_it_writes_again_once_what_another_transaction_deadlocked():
    tries = []

    def deadlocked_once():
        tries.append(len(tries))
        if len(tries) == 1:
            raise OperationalError("deadlock detected")
        return "written"

    assert await batched_writes.write(deadlocked_once) == "written"
    assert len(tries) == 2


def test_it_reads_the_policy_the_webhooks_and_the_token_once_for_a_batch_and_appends_its_audit_events_once(
    client_token, refund_tool
):
    admin = make_user("hook-admin", superuser=True)
    fields = {"url": "https://hooks.test/", "description": "", "events": ["call.pending"], "slack": False}
    endpoints.create_endpoint({**fields, "enabled": True, "console_url": "http://console.test/"}, admin)

    receive, _ = receiving(client_token, refund_tool)

    with CaptureQueriesContext(connection) as queries:
        outcomes = batched_writes.write_together([lambda n=n: receive(n) for n in range(5)])

    def reads_of(table):
        return [q["sql"] for q in queries if q["sql"].startswith("SELECT") and f'FROM "{table}"' in q["sql"]]

    assert [call.status for (call, _), _ in outcomes] == [Call.Status.PENDING] * 5
    assert len(reads_of("approvals_policyrule")) == 1
    assert len(reads_of("approvals_webhookendpoint")) == 1
    assert len(reads_of("approvals_clienttoken")) == 1
    assert len([q for q in queries if 'INSERT INTO "approvals_auditevent"' in q["sql"]]) == 1
    assert WebhookDelivery.objects.filter(event_type="call.pending").count() == 5


def test_it_reads_the_token_again_after_a_call_of_the_batch_rolled_back(client_token, refund_tool):
    receive, failing = receiving(client_token, refund_tool)

    with CaptureQueriesContext(connection) as queries:
        batched_writes.write_together([failing, lambda: receive(1)])

    token_reads = [q for q in queries if q["sql"].startswith("SELECT") and 'FROM "approvals_clienttoken"' in q["sql"]]
    assert len(token_reads) == 2


async def test_it_writes_a_lone_call_at_once_and_batches_only_what_arrives_while_a_write_runs(monkeypatch):
    batches, running, release = [], threading.Event(), threading.Event()

    def write_together(works):
        batches.append(len(works))
        running.set()
        release.wait(10)
        return [(work(), None) for work in works]

    async def waiting_for_company(*args, **kwargs):
        raise AssertionError("a write waited for others to join it")

    monkeypatch.setattr(batched_writes, "write_together", write_together)
    monkeypatch.setattr(asyncio, "sleep", waiting_for_company)

    lone = batched_writes.write(lambda: "lone")
    assert await asyncio.to_thread(running.wait, 10)
    later = [batched_writes.write(lambda n=n: n) for n in range(3)]
    release.set()

    assert await lone == "lone"
    assert await asyncio.gather(*later) == [0, 1, 2]
    assert batches == [1, 3]


async def test_it_hands_a_batchs_announcements_to_the_loop_with_its_outcomes_waking_the_loop_once(
    client_token, refund_tool, monkeypatch
):
    receive, _ = receiving(client_token, refund_tool)
    layer = get_channel_layer()
    operators = await layer.new_channel()
    await layer.group_add(events.OPERATORS, operators)
    loop, wakes = asyncio.get_running_loop(), []
    wake = loop.call_soon_threadsafe
    monkeypatch.setattr(
        loop, "call_soon_threadsafe", lambda *args, **kwargs: wakes.append(args) or wake(*args, **kwargs)
    )

    # Queued before the writer runs: one batch of five calls, each announced to the operators once it commits.
    calls = await asyncio.gather(*(batched_writes.write(lambda n=n: receive(n)) for n in range(5)))

    assert [call.status for call, _ in calls] == [Call.Status.PENDING] * 5
    announced = [await asyncio.wait_for(layer.receive(operators), 5) for _ in calls]
    assert sorted(message["call_id"] for message in announced) == sorted(call.pk for call, _ in calls)
    # The thread's one wake is its outcomes coming back; the announcements came with them.
    assert len(wakes) == 1
