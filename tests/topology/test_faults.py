"""A web process dies holding calls: every call it held still ends, audited, and leaves the queue.

The processes run with short intervals (a lease of two seconds, a sweep twice a second) so
that what takes under a minute with the defaults takes seconds here.
"""

import asyncio
import contextlib
import logging
import os
import signal
import time

import httpx
import pytest
from asgiref.sync import sync_to_async
from django.utils import timezone

from approvals.audit.models import AuditEvent
from approvals.calls import deciding, ending
from approvals.calls.models import Call
from approvals.demo import COMMAND_LINE
from approvals.tasks import housekeeping
from approvals.tokens.credentials import create_token
from tests.fixtures.catalog import add_synced_server
from tests.fixtures.gateway import hold_call
from tests.fixtures.people import PASSWORD, make_user
from tests.fixtures.processes import celery_beat, celery_worker, web_process
from tests.fixtures.servers import free_port
from tests.fixtures.waiting import eventually, wait_until
from tests.topology.test_processes import logged_in

FAST = {"CALL_REREAD_SECONDS": "0.2", "CALL_LEASE_SECONDS": "2", "STALE_CALLS_INTERVAL_SECONDS": "0.5"}
WITHIN_A_MINUTE = 60
# The sweep's last word for a call it ended, and a client's own cancellation.
ENDINGS = {"call.cancelled", "call.failed", "call.expired", "call.completed", "call.denied"}

RAN: list[str] = []


def note_a_run():
    RAN.append("run")


def fail_a_run():
    raise RuntimeError("a job that fails")


async def test_it_runs_each_job_of_the_schedule_at_its_interval_and_goes_on_after_a_failure(caplog):
    RAN.clear()
    schedule = {
        "often": {"task": f"{__name__}.note_a_run", "schedule": 0.05},
        "failing": {"task": f"{__name__}.fail_a_run", "schedule": 0.05},
    }
    started = time.monotonic()
    running = asyncio.ensure_future(housekeeping.run_schedule(schedule))
    try:
        await eventually(lambda: len(RAN) >= 3, message="three runs of the job")
    finally:
        running.cancel()
    assert time.monotonic() - started >= 3 * 0.05
    assert any(record.levelno == logging.ERROR and "failing" in record.getMessage() for record in caplog.records)


def calls_with(status, count):
    def found():
        calls = list(Call.objects.filter(status=status))
        return calls if len(calls) >= count else None

    return found


def pending(count):
    async def held():
        return await Call.objects.filter(status=Call.Status.PENDING).acount() == count

    return held


def kill(process):
    """The web process dies as a container does: granian's process and its worker together."""
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(10)


def offered(page: str, call: Call) -> bool:
    return f"/queue/{call.pk}/decide/" in page


@pytest.mark.django_db(transaction=True)
def test_it_ends_the_calls_of_a_killed_embedded_process_once_the_console_runs_again():
    """`make run`: one process, no beat. Restarted after a crash, it ends what the dead one held, within a minute."""
    make_user("ann", superuser=True)
    _, secret = create_token("agent")
    add_synced_server("Demo", transport="stdio", command=COMMAND_LINE)
    first, second = free_port(), free_port()
    embedded = {**FAST, "PERIODIC_WORK_IN_PROCESS": "1"}

    async def hold_two_and_kill(process):
        url = f"http://127.0.0.1:{first}/mcp"
        async with httpx.AsyncClient(timeout=None) as http:
            holding = [
                asyncio.create_task(hold_call(http, url, secret, "demo_lookup_customer", {"customer_id": f"C00{n}"}, n))
                for n in (1, 2)
            ]
            await eventually(pending(2), message="two calls held")
            kill(process)
            await asyncio.gather(*holding)

    with web_process(first, embedded) as process:
        asyncio.run(hold_two_and_kill(process))
    killed_at = time.monotonic()
    with web_process(second, embedded):
        held = wait_until(
            calls_with(Call.Status.CANCELLED, 2), timeout=WITHIN_A_MINUTE, message="the dead process's calls ended"
        )
        assert time.monotonic() - killed_at < WITHIN_A_MINUTE
        page = logged_in(f"http://127.0.0.1:{second}", "ann", PASSWORD).get("/queue/").text
    for call in held:
        assert call.reason == ending.ABANDONED
        assert AuditEvent.objects.filter(call_id=call.pk, action="call.cancelled").count() == 1
        assert not offered(page, call)


@pytest.mark.postgres
@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_it_accounts_for_every_call_of_a_process_killed_while_it_holds_calls_and_forwards_one():
    """Two web processes, a worker and beat on PostgreSQL and Redis; one process dies by SIGKILL."""
    ann = make_user("ann", superuser=True)
    _, secret = create_token("agent")
    add_synced_server("Demo", transport="stdio", command=COMMAND_LINE)
    ports = [free_port(), free_port()]
    bases = [f"http://127.0.0.1:{port}" for port in ports]

    async def scenario(doomed):
        async with httpx.AsyncClient(timeout=None) as http:
            await kill_while_holding(http, doomed)

    async def kill_while_holding(http, doomed):
        doomed_url, surviving_url = (f"{base}/mcp" for base in bases)
        on_doomed = [
            asyncio.create_task(
                hold_call(http, doomed_url, secret, "demo_lookup_customer", {"customer_id": f"C00{n}"}, n)
            )
            for n in (1, 2, 3)
        ]
        export = asyncio.create_task(
            hold_call(http, doomed_url, secret, "demo_export_report", {"report": "orders", "seconds": 30}, 4)
        )
        survivor = asyncio.create_task(
            hold_call(http, surviving_url, secret, "demo_lookup_customer", {"customer_id": "C009"}, 5)
        )
        await eventually(pending(5), message="five calls held")
        exporting = await Call.objects.aget(tool_name="demo_export_report")
        assert (await sync_to_async(deciding.decide)(exporting.pk, ann, True)).won
        await eventually(
            Call.objects.filter(pk=exporting.pk, status=Call.Status.FORWARDED).aexists, message="the export forwarded"
        )
        kill(doomed)
        killed_at = time.monotonic()
        await asyncio.gather(*on_doomed, export)

        async def ended():
            return (
                await Call.objects.filter(status__in=Call.OPEN)
                .exclude(tool_name="demo_lookup_customer", arguments__customer_id="C009")
                .acount()
                == 0
            )

        await eventually(ended, timeout=WITHIN_A_MINUTE, message="every call of the killed process ended")
        assert time.monotonic() - killed_at < WITHIN_A_MINUTE
        # Leased as long as the others and renewed since: the survivor's process still holds it.
        assert await Call.objects.filter(arguments__customer_id="C009", status=Call.Status.PENDING).aexists()
        survivor.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await survivor
        await eventually(
            Call.objects.filter(arguments__customer_id="C009", status=Call.Status.CANCELLED).aexists,
            message="the survivor's client leaving",
        )

    with celery_worker(FAST), celery_beat(FAST), web_process(ports[0], FAST) as doomed, web_process(ports[1], FAST):
        asyncio.run(scenario(doomed))

    calls = {call.pk: call for call in Call.objects.all()}
    assert len(calls) == 5
    assert not [call for call in calls.values() if call.status in Call.OPEN]
    for call in calls.values():
        endings = list(AuditEvent.objects.filter(call_id=call.pk, action__in=ENDINGS).values_list("action", flat=True))
        assert len(endings) == 1, (call, endings)
    export = next(call for call in calls.values() if call.tool_name == "demo_export_report")
    assert export.status == Call.Status.FAILED and export.error == ending.STOPPED_UPSTREAM
    abandoned = [call for call in calls.values() if call.reason == ending.ABANDONED]
    assert len(abandoned) == 3 and all(call.status == Call.Status.CANCELLED for call in abandoned)
    survivor = next(call for call in calls.values() if call.arguments == {"customer_id": "C009"})
    assert survivor.reason == "the client closed the request"
    assert survivor.answered_at <= timezone.now()
