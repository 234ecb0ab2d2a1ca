"""The queue page and its pushes with many calls pending, without holding them: hold_many's two figures, quickly.

    .venv/bin/python bench/queue_many.py [--calls 2000] [--setup embedded services] [--database queue_bench]

As bench/hold_many.py, one token's 2026-07-28 clients call `echo` under an ask rule and
nobody decides. Ten calls are held for real and nine more probes timed; then copies of a
held call's row are written straight into the database until --calls are pending (nobody
holds the copies, and no lease lapses on them), and it measures:

- queue page: GET /queue/ signed in as an operator, first and median of five; target < 300 ms;
  and the CPU time daphne spent per load, which other work on a shared machine disturbs less;
- push: a new call's arrival on an open queue websocket (the page's), from the client sending
  it, median of nine sent half a second apart, with 10 held and with --calls pending; target:
  as fast with many as with 10.

These are the figures of hold_many's queue page and push at a fraction of its time; hold_many
stays the measure of holding the calls themselves. Setups as in hold_many, the services one in
a database of its own (queue_bench or --database, and the name of DATABASE_URL's database).
"""

import asyncio
import os
import sys
from contextlib import ExitStack

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import manage, run_as_script
from hold_many import FEW, PAGE_LOADS, PROBES, Bench, measured_setups, started_bench
from machine import process_cpu_ms
from options import holding_arguments

BENCH_DATABASE = "queue_bench"
# Copies of the newest held call, one second apart and older than it, each a request of its own.
COPY_CALLS = """
import uuid
from datetime import timedelta
from approvals.calls.models import Call
call = Call.objects.filter(status="pending").latest("received_at", "pk")
copies = []
for number in range({count}):
    copy = Call.objects.get(pk=call.pk)
    copy.pk, copy.request_id, copy.holder, copy.lease_expires_at = None, str(uuid.uuid4()), "", None
    copy.received_at = call.received_at - timedelta(seconds={count} - number)
    copy.arguments = {{"message": f"queue-many {{number}}"}}
    copies.append(copy)
Call.objects.bulk_create(copies, batch_size=500)
"""


async def measure(bench: Bench, env: dict, calls: int) -> dict:
    await bench.watcher.sign_in()
    await bench.watcher.watch()
    try:
        await bench.hold_until_recorded(FEW)
        push_few = await bench.push_ms()
        copies = calls - FEW - 2 * PROBES
        await asyncio.to_thread(manage, env, "shell", "-c", COPY_CALLS.format(count=copies))
        cpu_before = process_cpu_ms(bench.pid)
        page_first, page_median, page_bytes = await bench.queue_page_ms()
        page_cpu = (process_cpu_ms(bench.pid) - cpu_before) / PAGE_LOADS
        push_many = await bench.push_ms()
        pending = bench.database.count("pending")
        for task in bench.holding:
            task.cancel()
        await asyncio.gather(*bench.holding, return_exceptions=True)
    finally:
        await bench.close()
    return {
        "pending": pending,
        "queue first ms": page_first,
        "queue median ms": page_median,
        "queue KB": page_bytes / 1024,
        "queue CPU ms per load": page_cpu,
        f"push ms, {FEW} held": push_few,
        "push ms, all pending": push_many,
    }


def run_setup(name: str, upstream_url: str, args) -> dict:
    with ExitStack() as stack:
        bench, env = started_bench(stack, name, upstream_url, args)
        return asyncio.run(measure(bench, env, args.calls))


def main():
    measured_setups(holding_arguments(__doc__, BENCH_DATABASE, FEW + 2 * PROBES + 1), run_setup)


if __name__ == "__main__":
    run_as_script(main, "bench")
