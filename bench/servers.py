"""The console's own application under each ASGI server, side by side: what its server costs an allowed call.

    .venv/bin/python bench/servers.py [--servers daphne uvicorn granian granian-asyncio] [--concurrency 1 10]
                                      [--calls 1500] [--sets 5]

One upstream (tests/servers/sdk_server.py); per server, an embedded console (SQLite, the in-memory channel
layer, an allow rule on the echo, as gateway_overhead.py's embedded setup) served by one process of it:

- `granian`, as `make run` and the production recipe serve it (tests/fixtures/servers.WEB_SERVER): ASGI with
  lifespan events, uvloop's loop, one worker;
- `granian-asyncio`, the same on asyncio's own loop;
- `daphne`, which served them before;
- `uvicorn` with uvloop and httptools, no lifespan (daphne sends none either).

httptools and uvicorn are not the console's dependencies: install them beside it to run uvicorn (a server
whose module is missing is left out, saying so). Per concurrency, sets of calls go to each console in turn
(--sets of each, --calls per server in all), so a spell of the shared machine weighs on all alike. Printed as a
Markdown table per server: calls a second, p50 and p95, and the CPU ms per call of the serving process and its
children, the mean and range across the sets; then the machine's CPU check before and after.
"""

import argparse
import asyncio
import importlib.util
import os
import sys
import time
from contextlib import ExitStack

import httpx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gateway_overhead import TOOL, Spread, measure, ready, start_console
from harness import BenchError, McpClient, Sample, run_as_script, upstream
from machine import collector_off, cpu_check_ms, process_cpu_ms
from options import checked_sets, sets_options

SERVERS = {
    "daphne": ["daphne"],
    "uvicorn": ["uvicorn", "uvloop", "httptools"],
    "granian": ["granian", "uvloop"],
    "granian-asyncio": ["granian"],
}
CALL_TIMEOUT_SECONDS = 30


def process_tree(pid: int) -> list[int]:
    """`pid` and its descendants, from /proc."""
    found, pending = [], [pid]
    while pending:
        each = pending.pop()
        found.append(each)
        try:
            with open(f"/proc/{each}/task/{each}/children") as children:
                pending += [int(child) for child in children.read().split()]
        except OSError:
            pass
    return found


def tree_cpu_ms(pid: int) -> float:
    return sum(process_cpu_ms(each) or 0.0 for each in process_tree(pid))


class Served:
    def __init__(self, name: str, client: McpClient, pid: int):
        self.name, self.client, self.pid = name, client, pid
        self.samples: dict[int, tuple[Sample, Spread]] = {}

    def at(self, concurrency: int) -> tuple[Sample, Spread]:
        return self.samples.setdefault(concurrency, (Sample(self.name, concurrency), Spread()))


async def run(args, stack: ExitStack, upstream_url: str) -> list[Served]:
    most = max(args.concurrency) * 2
    limits = httpx.Limits(max_connections=most, max_keepalive_connections=most)
    served = []
    for name in args.servers:
        print(f"starting {name}…", file=sys.stderr)
        urls, secret, pids = start_console(stack, "embedded", upstream_url, server=name)
        # A pool per server: httpx's pool looks over every connection it keeps for each request.
        http = httpx.AsyncClient(timeout=CALL_TIMEOUT_SECONDS, limits=limits)
        served.append(Served(name, McpClient(http, urls[0], args.revision, secret), pids[0]))
        await ready(served[-1].client, TOOL, name)
    with collector_off():
        for concurrency in args.concurrency:
            print(f"concurrency {concurrency}…", file=sys.stderr)
            for each in served:
                await measure([each.client], TOOL, Sample("warm-up", concurrency), args.warmup, time.monotonic() + 60)
            for n in range(args.sets):
                share = args.calls // args.sets + (n < args.calls % args.sets)
                for each in served:
                    whole, spread = each.at(concurrency)
                    part, before = Sample(each.name, concurrency), tree_cpu_ms(each.pid)
                    await measure([each.client], TOOL, part, share, time.monotonic() + args.seconds)
                    if part.calls + part.errors:
                        spread.cpu.append((tree_cpu_ms(each.pid) - before) / (part.calls + part.errors))
                    spread.share.append(part.throughput)
                    whole.latencies += part.latencies
                    whole.errors += part.errors
                    whole.wall += part.wall
    for each in served:
        await each.client.http.aclose()
    return served


def table(served: list[Served], concurrencies: list[int]) -> list[str]:
    lines = [
        "| concurrency | server | calls | errors | calls/s, mean (sets) | p50 ms | p95 ms "
        "| serving CPU ms per call, mean (sets) |",
        "|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for concurrency in concurrencies:
        for each in served:
            sample, spread = each.at(concurrency)
            lines.append(
                f"| {concurrency} | {each.name} | {sample.calls} | {sample.errors} "
                f"| {Spread.cell(spread.share, '.0f')} | {sample.percentile(50):.1f} | {sample.percentile(95):.1f} "
                f"| {Spread.cell(spread.cpu, '.2f')} |"
            )
    return lines


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--servers", nargs="+", choices=list(SERVERS), default=list(SERVERS), help="default: all")
    sets_options(parser, calls=1500, sets=5, warmup=50, seconds=120, what="server")
    args = checked_sets(parser)
    missing = {name for name in args.servers for module in SERVERS[name] if importlib.util.find_spec(module) is None}
    for name in sorted(missing):
        print(f"{name}: left out, {', '.join(SERVERS[name])} not all installed", file=sys.stderr)
    args.servers = [name for name in args.servers if name not in missing]
    if not args.servers:
        parser.error("none of the servers asked for is installed")
    return args


def main():
    args = arguments()
    started, check = time.strftime("%Y-%m-%d %H:%M", time.gmtime()), cpu_check_ms()
    with ExitStack() as stack:
        upstream_url, _ = upstream(stack)
        served = asyncio.run(run(args, stack, upstream_url))
    print(f"tools/call `echo` under an allow rule, embedded, revision {args.revision}, from {started} UTC")
    print("\n".join(["", *table(served, args.concurrency)]))
    print(f"\nCPU check (bench/machine.py): {check:.0f} ms before, {cpu_check_ms():.0f} ms after")
    if any(sample.errors for each in served for sample, _ in each.samples.values()):
        raise BenchError("some calls failed")


if __name__ == "__main__":
    run_as_script(main, "servers")
