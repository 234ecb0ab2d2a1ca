"""Many calls held at once in one web process (granian, as `make run` serves it): what they cost while they wait.

    .venv/bin/python bench/hold_many.py [--calls 2000] [--setup embedded services] [--database hold_bench]

One token's clients (2026-07-28, each call on an SSE stream of its own) call `echo` under an
ask rule, and nobody decides: every call waits. The server runs with no per-token cap on
pending calls or open streams (MAX_PENDING_CALLS_PER_TOKEN=0, MCP_MAX_STREAMS_PER_TOKEN=0).
With 10 calls held, then with --calls held, it measures:

- recorded: from sending the burst of calls to the last one recorded as pending, and from
  the first of them recorded to the last (Call.received_at); target: within 60 s of the first;
- RSS: the serving process's resident memory with every call held (and its peak); target < 400 MB;
- queue page: GET /queue/ signed in as an operator, first and median of five; target < 300 ms;
- push: a new call's arrival on an open queue websocket (the page's), from the client sending
  it, median of nine sent half a second apart, with 10 held and with --calls held (right after
  the burst is recorded, and again once it has settled); target: as fast with many as with 10.
  The probes come from an HTTP client of their own, as a new agent's call would: sent through
  the fleet's client they would also time its pool walking every connection it holds open;
- cancel: the client streams all closed at once, until every held call is cancelled;
- CPU: the serving process's CPU time per call while the burst is recorded and while the calls are cancelled,
  which other work on a shared machine disturbs less than the wall-clock figures.

Setups: `embedded` is SQLite in a temporary directory and the in-memory channel layer.
`services` is PostgreSQL (a database of its own, hold_bench or --database and the name of
DATABASE_URL's database, created and dropped here) and Redis, from DATABASE_URL and REDIS_URL
(defaults as in bench/push_latency.py); it runs only when both are set or named with --setup.
The upstream is tests/servers/sdk_server.py over HTTP; nothing reaches it, since no call is
approved. Everything listens on loopback and everything started is stopped.
"""

import asyncio
import contextlib
import os
import re
import sqlite3
import statistics
import sys
import time
from contextlib import ExitStack
from datetime import datetime
from pathlib import Path

import httpx
import psycopg

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import BenchError, console_process, each_setup, run_as_script, setup_env
from machine import process_cpu_ms
from operators import Operator, prepare_asking
from options import holding_arguments

from tests.fixtures.gateway import hold_call

BENCH_DATABASE = "hold_bench"
FEW = 10
PROBES = 9
# Probes arrive as separate calls do: one sent the moment the last one's row arrived would also
# time the rest of that call's own recording.
PROBE_GAP_SECONDS = 0.5
# Long enough for the burst's own aftermath (its pushes, its first keep-alives) to pass.
SETTLE_SECONDS = 10
PAGE_LOADS = 5
# Connections being opened at once: as when daphne served the console, with twisted's backlog of 50.
OPENING_AT_ONCE = 50
RECORD_SECONDS = 180
PROBE = re.compile(r"hold-many probe \d+")


class Watcher(Operator):
    """The queue page's socket, noting when each probe's row arrives; it decides nothing."""

    def __init__(self, base: str):
        super().__init__(base)
        self.expected: dict[str, asyncio.Future] = {}

    def on_pending(self, message: dict, now: float):
        found = PROBE.search(message["html"])
        waiting = found and self.expected.get(found.group(0))
        if waiting and not waiting.done():
            waiting.set_result(now)


class Database:
    """Counts of the console's calls, read straight from its database."""

    def __init__(self, env: dict):
        self.url = env.get("DATABASE_URL")
        self.path = Path(env.get("CONSOLE_VAR_DIR", "")) / "console.sqlite3"

    def rows(self, sql: str) -> list[tuple]:
        if self.url:
            with psycopg.connect(self.url) as connection:
                return connection.execute(sql).fetchall()
        with sqlite3.connect(self.path, timeout=30) as connection:
            return connection.execute(sql).fetchall()

    def count(self, status: str) -> int:
        return self.rows(f"SELECT count(*) FROM approvals_call WHERE status = '{status}'")[0][0]

    def received(self, since_id: int) -> tuple[datetime, datetime]:
        first, last = self.rows(f"SELECT min(received_at), max(received_at) FROM approvals_call WHERE id > {since_id}")[
            0
        ]
        return moment(first), moment(last)

    def last_id(self) -> int:
        return self.rows("SELECT coalesce(max(id), 0) FROM approvals_call")[0][0]


def moment(value) -> datetime:
    return value if isinstance(value, datetime) else datetime.fromisoformat(value)


async def wait_for(condition, seconds: float, what: str, every: float = 0.25):
    deadline = time.monotonic() + seconds
    while not await asyncio.to_thread(condition):
        if time.monotonic() > deadline:
            raise BenchError(f"{what} did not happen within {seconds:g} s")
        await asyncio.sleep(every)


def memory_mb(pid: int) -> tuple[float, float]:
    """The process's resident memory now and at its peak, in MB."""
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


class Bench:
    def __init__(self, base: str, pid: int, secret: str, tool: str, database: Database):
        self.base, self.pid, self.secret, self.tool, self.database = base, pid, secret, tool, database
        self.http = httpx.AsyncClient(
            timeout=None, limits=httpx.Limits(max_connections=None, max_keepalive_connections=None)
        )
        # A new client's call, apart from the fleet's thousands of open connections.
        self.probing = httpx.AsyncClient(timeout=None)
        self.holding: list[asyncio.Task] = []
        self.opening = asyncio.Semaphore(OPENING_AT_ONCE)
        self.watcher = Watcher(base)
        self.probes = 0

    def hold(self, text: str, http: httpx.AsyncClient | None = None):
        number = len(self.holding) + 1
        self.holding.append(
            asyncio.create_task(
                hold_call(
                    http or self.http,
                    f"{self.base}/mcp",
                    self.secret,
                    self.tool,
                    {"message": text},
                    number,
                    self.opening,
                )
            )
        )

    async def hold_until_recorded(self, count: int) -> tuple[float, float]:
        """Send `count` calls at once: seconds until the last is recorded, and from the first recorded to the last."""
        since, held = self.database.last_id(), self.database.count("pending")
        sent = time.monotonic()
        for _ in range(count):
            self.hold(f"hold-many {len(self.holding)}")

        def all_recorded():
            recorded = self.database.count("pending") - held
            print(f"  {time.monotonic() - sent:5.1f} s: {recorded} of {count} recorded", file=sys.stderr)
            return recorded >= count

        await wait_for(all_recorded, RECORD_SECONDS, f"{count} calls held", every=5)
        first, last = self.database.received(since)
        return time.monotonic() - sent, (last - first).total_seconds()

    async def push_ms(self) -> float:
        """A new call's arrival on the open queue socket, from its sending: median of PROBES, in ms."""
        latencies = []
        for _ in range(PROBES):
            await asyncio.sleep(PROBE_GAP_SECONDS)
            self.probes += 1
            text = f"hold-many probe {self.probes}"
            arrival = self.watcher.expected[text] = asyncio.get_running_loop().create_future()
            sent = time.time()
            self.hold(text, self.probing)
            latencies.append((await asyncio.wait_for(arrival, 60) - sent) * 1000)
        print(f"  push with {len(self.holding)} held, ms: {' '.join(f'{ms:.0f}' for ms in latencies)}", file=sys.stderr)
        return statistics.median(latencies)

    async def queue_page_ms(self) -> tuple[float, float, int]:
        """GET /queue/ signed in: the first time, the median of five, and its size in bytes."""
        times, size = [], 0
        for _ in range(PAGE_LOADS):
            started = time.monotonic()
            response = await self.watcher.http.get("/queue/")
            times.append((time.monotonic() - started) * 1000)
            if response.status_code != 200:
                raise BenchError(f"the queue page answered HTTP {response.status_code}")
            size = len(response.content)
        return times[0], statistics.median(times), size

    async def close_all(self) -> tuple[float, int]:
        """Close every client stream at once: seconds until no call is pending, and how many ended cancelled."""
        cancelled_before = self.database.count("cancelled")
        started = time.monotonic()
        for task in self.holding:
            task.cancel()
        await asyncio.gather(*self.holding, return_exceptions=True)
        # Past the limit, the figures say how far it got rather than end the run.
        with contextlib.suppress(BenchError):
            await wait_for(lambda: self.database.count("pending") == 0, RECORD_SECONDS, "every held call cancelled")
        return time.monotonic() - started, self.database.count("cancelled") - cancelled_before

    async def close(self):
        await self.watcher.close()
        await self.probing.aclose()
        await self.http.aclose()

    async def run(self, calls: int) -> dict:
        await self.watcher.sign_in()
        await self.watcher.watch()
        try:
            await self.hold_until_recorded(FEW)
            push_few = await self.push_ms()
            # The probes are held calls too: the burst brings the total to `calls`.
            burst, cpu_before = calls - FEW - PROBES, process_cpu_ms(self.pid)
            wall, span = await self.hold_until_recorded(burst)
            recording_cpu = (process_cpu_ms(self.pid) - cpu_before) / burst
            rss, peak = memory_mb(self.pid)
            page_first, page_median, page_bytes = await self.queue_page_ms()
            push_many = await self.push_ms()
            await asyncio.sleep(SETTLE_SECONDS)
            push_settled = await self.push_ms()
            held = len(self.holding)
            cpu_before = process_cpu_ms(self.pid)
            close_seconds, cancelled = await self.close_all()
            cancelling_cpu = (process_cpu_ms(self.pid) - cpu_before) / held
        finally:
            await self.close()
        return {
            "held": held,
            "recorded s": wall,
            "first → last s": span,
            "RSS MB": rss,
            "peak MB": peak,
            "queue first ms": page_first,
            "queue median ms": page_median,
            "queue KB": page_bytes / 1024,
            f"push ms, {FEW} held": push_few,
            "push ms, all held": push_many,
            f"push ms, all held, {SETTLE_SECONDS} s later": push_settled,
            "cancel s": close_seconds,
            "cancelled": cancelled,
            "CPU ms per call recorded": recording_cpu,
            "CPU ms per call cancelled": cancelling_cpu,
        }


def started_bench(stack: ExitStack, name: str, upstream_url: str, args) -> tuple[Bench, dict]:
    """A setup's console, prepared and serving with no cap on pending calls or streams, until `stack` ends:
    the Bench on it, and its environment."""
    env = setup_env(stack, name, args.database)
    env.update(MAX_PENDING_CALLS_PER_TOKEN="0", MCP_MAX_STREAMS_PER_TOKEN="0")
    tool, secret = prepare_asking(env, upstream_url)
    base, pid = console_process(stack, env)
    return Bench(base, pid, secret, tool, Database(env)), env


def run_setup(name: str, upstream_url: str, args) -> dict:
    with ExitStack() as stack:
        bench, _ = started_bench(stack, name, upstream_url, args)
        return asyncio.run(bench.run(args.calls))


def measured_setups(args, run_setup) -> dict:
    """Each setup's figures from `run_setup(name, upstream_url, args)`, against one upstream; they are printed too."""
    results = {name: run_setup(name, upstream_url, args) for name, upstream_url in each_setup(args)}
    lines = [f"| measure | {' | '.join(results)} |", "|---|" + "---:|" * len(results)]
    for measure in next(iter(results.values())):
        lines.append(f"| {measure} | {' | '.join(f'{values[measure]:.1f}' for values in results.values())} |")
    print("\n".join(lines))
    return results


def main():
    results = measured_setups(holding_arguments(__doc__, BENCH_DATABASE, FEW + 2 * PROBES), run_setup)
    if any(values["cancelled"] != values["held"] for values in results.values()):
        sys.exit("bench: closing the streams did not cancel every held call")


if __name__ == "__main__":
    run_as_script(main, "bench")
