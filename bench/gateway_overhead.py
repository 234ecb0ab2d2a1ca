"""What the console costs an allowed tools/call: the same echo call, direct to an upstream and through /mcp.

    .venv/bin/python bench/gateway_overhead.py [--setup embedded|services|both] [--concurrency 1 10 50]
                                               [--calls 300] [--sets 3] [--seconds 60] [--revision 2025-11-25]
                                               [--server granian|granian-asyncio|daphne|uvicorn]

One upstream (tests/servers/sdk_server.py, the official SDK's MCPServer over Streamable
HTTP) serves the whole run. Per setup, the console is started under granian with a
server, an allow rule on its echo and a token; then, per concurrency, sets of calls go
alternately direct and through the console (--sets of each, --calls per path in all),
so that a spell of the shared machine weighs on both paths alike. Printed per setup, as
a Markdown table: calls a second, p50 and p95 latency per path, their ratios, the p50
the console adds, and the CPU the console's web processes spent per call (from
/proc/<pid>/stat, utime and stime), each with its mean and range across the sets; then,
per path, where the machine's CPU went per call (the console, PostgreSQL, Redis, the
upstream, this client and the rest) and how busy the machine was: when both paths fill
the machine, the ratio of their CPU per call is the most throughput the console's path
can have against direct's there. Last, the machine's CPU check before and after
(bench/machine.py).

Setups: `embedded` is SQLite in a temporary directory, the in-memory channel layer and
one web process. `services` is PostgreSQL (a database of its own, overhead_bench_ and
the name of DATABASE_URL's database, created and dropped here) and Redis (REDIS_URL,
default redis://127.0.0.1:6379/14) with two web processes, the clients' calls spread
over both. Targets: at concurrency 10 at least half the direct throughput, and at
concurrency 1 at most 5 ms added to the p50.

The client is raw httpx speaking JSON-RPC, not the SDK's client, whose own per-call
work would weigh on both paths and blur the console's share; one session per path and
console process, a connection pool per path. A call through the console is a real one:
recorded, validated, decided by the allow rule, audited, forwarded, its result checked
and recorded. The console's per-token rate limit is lifted (MCP_RATE_LIMIT_PER_MINUTE).
Everything listens on loopback; everything started is stopped.
"""

import argparse
import asyncio
import itertools
import os
import sys
import time
from contextlib import ExitStack
from dataclasses import dataclass, field

import httpx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from accounting import Accounts, accounted, table_head
from harness import (
    SETUPS,
    WEB_SERVERS,
    BenchError,
    McpClient,
    Sample,
    prepare_console,
    run_as_script,
    setup_env,
    upstream,
    web_process,
)
from machine import collector_off, cpu_check_ms
from options import checked_sets, sets_options

BENCH_DATABASE = "overhead_bench"
READY_SECONDS = 60
CALL_TIMEOUT_SECONDS = 30
ECHO, TOOL = "echo", "bench_echo"
# Issue 44's targets per setup: throughput against direct at concurrency 10, ms added to the p50 at concurrency 1,
# and the console's CPU per allowed call (embedded only).
TARGETS = {"embedded": (0.5, 5.0, 3.0), "services": (0.4, 8.0, None)}


def echoed(answer: dict, text: str) -> bool:
    result = answer.get("result") or {}
    content = result.get("content") or [{}]
    return not result.get("isError") and content[0].get("text") == text


async def measure(clients: list[McpClient], tool: str, sample: Sample, calls: int, deadline: float):
    """`calls` echo calls, `sample.concurrency` at a time spread over `clients`, added to `sample`."""
    numbers = iter(range(calls))

    async def worker(client: McpClient):
        for n in numbers:
            if time.monotonic() > deadline:
                return
            text = f"call {n}"
            started = time.perf_counter()
            try:
                ok = echoed(await client.call(tool, {"message": text}), text)
            except (httpx.HTTPError, BenchError, ValueError):
                ok = False
            if ok:
                sample.latencies.append(time.perf_counter() - started)
            else:
                sample.errors += 1

    started = time.perf_counter()
    await asyncio.gather(*(worker(client) for client, _ in zip(itertools.cycle(clients), range(sample.concurrency))))
    sample.wall += time.perf_counter() - started


async def ready(client: McpClient, tool: str, what: str):
    """Poll until an echo goes through: a server listening is not yet the endpoint working."""
    deadline, last = time.monotonic() + READY_SECONDS, None
    while time.monotonic() < deadline:
        try:
            await client.start()
            if echoed(await client.call(tool, {"message": "ready?"}), "ready?"):
                return
            last = "the call did not echo"
        except (httpx.HTTPError, BenchError, ValueError, KeyError) as exc:
            last = exc
        await asyncio.sleep(0.5)
    raise BenchError(f"{what} did not answer a tools/call within {READY_SECONDS}s: {last}")


@dataclass
class Spread:
    """Per alternating set: the console's CPU ms per call and its throughput against direct's in the set before;
    where each path's CPU went (accounting.Accounts)."""

    cpu: list[float] = field(default_factory=list)
    share: list[float] = field(default_factory=list)
    accounts: Accounts = field(default_factory=Accounts)

    @staticmethod
    def cell(values: list[float], form: str) -> str:
        if not values:
            return "-"
        return f"{sum(values) / len(values):{form}} ({min(values):{form}}–{max(values):{form}})"


async def compare(
    args, upstream: tuple[str, int], console_urls: list[str], secret: str, pids: list[int]
) -> list[tuple]:
    """Per concurrency: (direct sample, console sample, the spread across the alternating sets)."""
    upstream_url, upstream_pid = upstream
    most = max(args.concurrency) * 2
    limits = httpx.Limits(max_connections=most, max_keepalive_connections=most)
    async with (
        httpx.AsyncClient(timeout=CALL_TIMEOUT_SECONDS, limits=limits) as to_upstream,
        httpx.AsyncClient(timeout=CALL_TIMEOUT_SECONDS, limits=limits) as to_console,
    ):
        # A pool per path: httpx's pool looks over every connection it keeps for each request, so one pool for
        # both would charge each path's calls for the other's connections, and bind the direct path to the client.
        direct = [McpClient(to_upstream, upstream_url, args.revision)]
        through = [McpClient(to_console, url, args.revision, secret) for url in console_urls]
        await ready(direct[0], ECHO, "the upstream")
        for n, client in enumerate(through):
            await ready(client, TOOL, f"the console's /mcp ({n + 1})")
        rows = []
        for concurrency in args.concurrency:
            # Unmeasured: the first calls at a concurrency open connections and warm both paths.
            await measure(direct, ECHO, Sample("warm-up", concurrency), args.warmup, time.monotonic() + args.seconds)
            await measure(through, TOOL, Sample("warm-up", concurrency), args.warmup, time.monotonic() + args.seconds)
            pair, spread = (Sample("direct", concurrency), Sample("console", concurrency)), Spread()
            deadline = time.monotonic() + args.seconds
            for n in range(args.sets):
                share = args.calls // args.sets + (n < args.calls % args.sets)
                sets = (Sample("direct", concurrency), Sample("console", concurrency))
                used = await accounted(pids, upstream_pid, measure(direct, ECHO, sets[0], share, deadline))
                spread.accounts.add("direct", used, sets[0].calls + sets[0].errors)
                used = await accounted(pids, upstream_pid, measure(through, TOOL, sets[1], share, deadline))
                # Every call the console took is charged, the refused and failed too: the CPU they cost is real.
                spread.accounts.add("console", used, sets[1].calls + sets[1].errors)
                if sets[1].calls:
                    spread.cpu.append(used["console"] / (sets[1].calls + sets[1].errors))
                if sets[0].throughput:
                    spread.share.append(sets[1].throughput / sets[0].throughput)
                for whole, part in zip(pair, sets, strict=True):
                    whole.latencies += part.latencies
                    whole.errors += part.errors
                    whole.wall += part.wall
            rows.append((*pair, spread))
        return rows


def start_console(
    stack: ExitStack, setup: str, upstream_url: str, database: str = BENCH_DATABASE, server: str = "granian"
):
    """The console of `setup`, its server's echo allowed, served by `server` (harness.WEB_SERVERS) until `stack`
    ends: its /mcp URLs, a token's secret and its web processes' pids."""
    env = setup_env(stack, setup, database)
    allow = ["--action", "allow", "--server", "bench", "--tool", TOOL, "--name", "gateway overhead bench"]
    secret = prepare_console(
        env, ["bench", "--url", upstream_url, "--prefix", "bench_"], [allow], ["overhead-bench", "--tools", TOOL]
    )
    consoles = [web_process(stack, env, server) for _ in range(1 if setup == "embedded" else 2)]
    return [f"{base}/mcp" for base, _ in consoles], secret, [pid for _, pid in consoles]


def run_setup(name: str, upstream: tuple[str, int], args) -> list[tuple]:
    with ExitStack() as stack:
        urls, secret, pids = start_console(stack, name, upstream[0], server=args.server)
        with collector_off():
            return asyncio.run(compare(args, upstream, urls, secret, pids))


def ratio(console: float, direct: float) -> str:
    return f"×{console / direct:.2f}" if direct else "-"


def table(name: str, rows: list[tuple], load: tuple[float, float]) -> list[str]:
    lines = [
        f"{name}: load average {load[0]:.1f} at the start, {load[1]:.1f} at the end",
        "",
        "| concurrency | path | calls | errors | calls/s | p50 ms | p95 ms | console CPU ms per call, mean (sets) |",
        "|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for direct, console, spread in rows:
        for s in (direct, console):
            cell = Spread.cell(spread.cpu, ".2f") if s is console else ""
            lines.append(
                f"| {s.concurrency} | {s.path} | {s.calls} | {s.errors} | {s.throughput:.0f} "
                f"| {s.percentile(50):.1f} | {s.percentile(95):.1f} | {cell} |"
            )
        added = console.percentile(50) - direct.percentile(50)
        lines.append(
            f"| {direct.concurrency} | console ÷ direct | | | {ratio(console.throughput, direct.throughput)}, "
            f"sets ×{Spread.cell(spread.share, '.2f')} "
            f"| {ratio(console.percentile(50), direct.percentile(50))} (+{added:.1f} ms) "
            f"| {ratio(console.percentile(95), direct.percentile(95))} | |"
        )
    lines += ["", *table_head()]
    for direct, _, spread in rows:
        lines += spread.accounts.rows(direct.concurrency)
    return lines


def verdicts(name: str, rows: list[tuple]) -> list[str]:
    least_share, most_added, most_cpu = TARGETS[name]
    lines = []
    for direct, console, spread in rows:
        if direct.concurrency == 10:
            share = console.throughput / direct.throughput if direct.throughput else 0.0
            met = "met" if share >= least_share else "missed"
            target = f"target ≥ ×{least_share}"
            lines.append(f"- {name}, concurrency 10: ×{share:.2f} of direct throughput ({target}): {met}")
            lines.append(f"- {name}, concurrency 10: {spread.accounts.ceiling()}")
        if direct.concurrency == 1:
            added = console.percentile(50) - direct.percentile(50)
            met = "met" if added <= most_added else "missed"
            lines.append(f"- {name}, concurrency 1: +{added:.1f} ms at the p50 (target ≤ {most_added:g} ms): {met}")
        if most_cpu is not None and spread.cpu:
            cpu = sum(spread.cpu) / len(spread.cpu)
            met = "met" if cpu <= most_cpu else "missed"
            lines.append(
                f"- {name}, concurrency {direct.concurrency}: {cpu:.2f} ms of console CPU per call "
                f"(target ≤ {most_cpu:g} ms): {met}"
            )
    return lines


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--setup", choices=[*SETUPS, "both"], default="both")
    parser.add_argument("--server", choices=list(WEB_SERVERS), default="granian", help="the console's; default granian")
    sets_options(
        parser, calls=300, sets=3, warmup=20, seconds=60, what="path", concurrency=(1, 10, 50), bound="concurrency"
    )
    args = checked_sets(parser)
    args.setup = SETUPS if args.setup == "both" else [args.setup]
    return args


def main():
    args = arguments()
    check = cpu_check_ms()
    lines, summary, failed = [f"tools/call `echo` under an allow rule, revision {args.revision}", ""], [], False
    with ExitStack() as stack:
        serving = upstream(stack)
        for name in args.setup:
            print(f"measuring {name}…", file=sys.stderr)
            before = os.getloadavg()[0]
            rows = run_setup(name, serving, args)
            lines += [*table(name, rows, (before, os.getloadavg()[0])), ""]
            summary += verdicts(name, rows)
            failed = failed or any(s.errors for row in rows for s in row[:2])
    summary.append(f"- CPU check (bench/machine.py): {check:.0f} ms before, {cpu_check_ms():.0f} ms after")
    print("\n".join(lines + summary))
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    run_as_script(main, "bench")
