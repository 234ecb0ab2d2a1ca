"""What the stack itself costs an allowed tools/call, beside the console: the floor under gateway_overhead's targets.

    .venv/bin/python bench/stack_floor.py [--paths direct bare floor embedded services] [--concurrency 1 10]
                                          [--calls 1500] [--sets 5]

Paths to one upstream (tests/servers/sdk_server.py, the official SDK's MCPServer), the same echo call on each:

- `direct`: to the upstream;
- `bare`: bench/floor_app.py under daphne answering the echo itself: daphne and Django alone, no upstream;
- `floor`: through bench/floor_app.py under daphne: Django's ASGI handler with no middleware and no database, one
  view forwarding the call through the console's own upstream client and answering as JSON. It identifies,
  records, audits, decides and validates nothing: no gateway built on daphne, Django and that client costs less;
- `embedded`: through the console on SQLite, one daphne process, an allow rule deciding the call (as
  gateway_overhead.py's embedded setup);
- `services`: through the console on PostgreSQL and Redis, two daphne processes (DATABASE_URL's server, in a
  database of the bench's own, and REDIS_URL).

Per concurrency, sets of calls go to each path in turn (--sets of each, --calls per path in all), so a spell of
the shared machine weighs on all alike. Printed per path, as a Markdown table: calls a second and p50 against
direct, and where the work is done, per call: in the serving processes (floor_app's or the console's daphne), the
upstream, this client, the rest of the machine (PostgreSQL, Redis, the kernel) and the whole machine. Those are
instructions, counted by `perf stat` (Debian's linux-perf), where this machine's counters allow it: a busy
machine slows every path but leaves instruction counts alone. Elsewhere they are CPU milliseconds from /proc.
The serving processes' CPU milliseconds per call are also given from /proc per set, their mean and range, and the
machine's CPU check before and after the run (bench/machine.py).
"""

import argparse
import asyncio
import os
import signal
import subprocess
import sys
import time
from contextlib import AsyncExitStack, ExitStack, asynccontextmanager

import httpx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gateway_overhead import ECHO, TOOL, Spread, measure, ready, start_console
from harness import REPO, BenchError, McpClient, Sample, run_as_script, upstream
from machine import collector_off, cpu_check_ms, cpu_times, process_cpu_ms
from options import checked_sets, sets_options

from tests.fixtures.servers import free_port, running

PATHS = ["direct", "bare", "floor", "embedded", "services"]
BENCH_DATABASE = "floor_bench"
CALL_TIMEOUT_SECONDS = 30
# perf stat attaches to a process after it starts: a set begins once it has.
ATTACH_SECONDS = 0.3
# /proc/stat counts in clock ticks, a hundredth of a second on Linux.
TICK_MS = 10


def perf_counts_instructions() -> bool:
    try:
        done = subprocess.run(
            ["perf", "stat", "-x,", "-e", "instructions", "true"], capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0 and any(line.split(",")[0].isdigit() for line in done.stderr.splitlines())


def machine_busy_ms() -> float:
    times = cpu_times()
    # user, nice, system, idle, iowait, …: all but idle and iowait is work done.
    return (sum(times) - sum(times[3:5])) * TICK_MS if times else 0.0


class Meter:
    """The work each group of processes, and the whole machine, does over the sets measured through it."""

    def __init__(self, groups: dict[str, list[int]], instructions: bool):
        self.groups, self.instructions = groups, instructions
        self.totals = dict.fromkeys([*groups, "machine"], 0.0)
        # The serving processes' CPU ms per call in each set, from /proc whatever counts the rest.
        self.serving_sets: list[float] = []

    @asynccontextmanager
    async def measuring(self, sample: Sample):
        calls, serving = sample.calls + sample.errors, self.serving_cpu_ms()
        async with self.counting():
            yield
        if self.groups["serving"] and sample.calls + sample.errors > calls:
            self.serving_sets.append((self.serving_cpu_ms() - serving) / (sample.calls + sample.errors - calls))

    def serving_cpu_ms(self) -> float:
        return sum(process_cpu_ms(pid) or 0.0 for pid in self.groups["serving"])

    @asynccontextmanager
    async def counting(self):
        counters = {}
        if self.instructions:
            for name, pids in [*self.groups.items(), ("machine", None)]:
                scope = ["-a"] if pids is None else ["-p", ",".join(map(str, pids))]
                argv = ["perf", "stat", "-x,", "-e", "instructions", *scope]
                counters[name] = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True)
            await asyncio.sleep(ATTACH_SECONDS)
        before = None if self.instructions else self.cpu_ms()
        yield
        if before is not None:
            after = self.cpu_ms()
            for name in self.totals:
                self.totals[name] += after[name] - before[name]
        for name, counter in counters.items():
            counter.send_signal(signal.SIGINT)
            said = counter.communicate(timeout=30)[1]
            self.totals[name] += sum(int(line.split(",")[0]) for line in said.splitlines() if line[:1].isdigit())

    def cpu_ms(self) -> dict[str, float]:
        spent = {name: sum(process_cpu_ms(pid) or 0.0 for pid in pids) for name, pids in self.groups.items()}
        return {**spent, "machine": machine_busy_ms()}

    def per_call(self, calls: int) -> dict[str, float]:
        scale = 1e6 if self.instructions else 1.0
        work = {name: total / scale / max(1, calls) for name, total in self.totals.items()}
        work["rest"] = work["machine"] - sum(work[name] for name in self.groups)
        return work


class Path:
    def __init__(self, name: str, clients: list[McpClient], tool: str, groups: dict[str, list[int]], perf: bool):
        self.name, self.clients, self.tool, self.groups, self.perf = name, clients, tool, groups, perf
        self.samples: dict[int, tuple[Sample, Meter]] = {}

    def at(self, concurrency: int) -> tuple[Sample, Meter]:
        if concurrency not in self.samples:
            self.samples[concurrency] = (Sample(self.name, concurrency), Meter(self.groups, self.perf))
        return self.samples[concurrency]


def start_floor(stack: ExitStack, upstream_url: str) -> tuple[str, int]:
    """bench/floor_app.py under daphne, forwarding to `upstream_url`, or answering itself if it is empty."""
    port = free_port()
    argv = [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), "floor_app:application"]
    env = {"UPSTREAM_URL": upstream_url, "PYTHONPATH": str(REPO / "bench")}
    process = stack.enter_context(running(argv, port=port, env=env))
    return f"http://127.0.0.1:{port}/mcp", process.pid


async def run(args, stack: ExitStack) -> list[Path]:
    upstream_url, upstream_pid = upstream(stack)
    perf = perf_counts_instructions()
    async with AsyncExitStack() as pools:
        return await measure_paths(args, stack, pools, upstream_pid, upstream_url, perf)


async def measure_paths(args, stack: ExitStack, pools: AsyncExitStack, upstream_pid: int, upstream_url: str, perf):
    most = max(args.concurrency) * 2
    limits = httpx.Limits(max_connections=most, max_keepalive_connections=most)

    async def path(name: str, urls: list[str], tool: str, serving: list[int], secret: str | None = None) -> Path:
        # A pool per path: httpx's pool looks over every connection it keeps for each request, so one shared by
        # the paths would charge each path's calls for the others' connections.
        http = await pools.enter_async_context(httpx.AsyncClient(timeout=CALL_TIMEOUT_SECONDS, limits=limits))
        groups = {"serving": serving, "upstream": [upstream_pid], "client": [os.getpid()]}
        return Path(name, [McpClient(http, url, args.revision, secret) for url in urls], tool, groups, perf)

    paths = []
    for name in args.paths:
        print(f"starting {name}…", file=sys.stderr)
        if name == "direct":
            paths.append(await path(name, [upstream_url], ECHO, []))
        elif name in ("bare", "floor"):
            url, pid = start_floor(stack, upstream_url if name == "floor" else "")
            paths.append(await path(name, [url], ECHO, [pid]))
        else:
            # On daphne, as the floor is, so that the two differ by the console's own work alone.
            urls, secret, pids = start_console(stack, name, upstream_url, BENCH_DATABASE, server="daphne")
            paths.append(await path(name, urls, TOOL, pids, secret))
        for client in paths[-1].clients:
            await ready(client, paths[-1].tool, name)
    with collector_off():
        for concurrency in args.concurrency:
            print(f"concurrency {concurrency}…", file=sys.stderr)
            for each in paths:
                await measure(
                    each.clients, each.tool, Sample("warm-up", concurrency), args.warmup, time.monotonic() + 60
                )
            for n in range(args.sets):
                share = args.calls // args.sets + (n < args.calls % args.sets)
                for each in paths:
                    sample, meter = each.at(concurrency)
                    async with meter.measuring(sample):
                        await measure(each.clients, each.tool, sample, share, time.monotonic() + args.seconds)
    return paths


def table(paths: list[Path], concurrencies: list[int], perf: bool) -> list[str]:
    unit = "millions of instructions" if perf else "CPU ms"
    lines = [
        f"| concurrency | path | calls | errors | calls/s | × direct | p50 ms | + p50 ms | {unit} per call: serving "
        "| upstream | client | rest of the machine | whole machine | serving CPU ms per call, mean (sets) |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    direct = next((each for each in paths if each.name == "direct"), None)
    for concurrency in concurrencies:
        base = direct.at(concurrency)[0] if direct else None
        for each in paths:
            sample, meter = each.at(concurrency)
            work = meter.per_call(sample.calls + sample.errors)
            share = f"×{sample.throughput / base.throughput:.2f}" if base and base.throughput else ""
            added = f"{sample.percentile(50) - base.percentile(50):+.1f}" if base and base.calls else ""
            cells = " | ".join(f"{work[name]:.2f}" for name in ("serving", "upstream", "client", "rest", "machine"))
            lines.append(
                f"| {concurrency} | {each.name} | {sample.calls} | {sample.errors} | {sample.throughput:.0f} | {share} "
                f"| {sample.percentile(50):.1f} | {added} | {cells} | {Spread.cell(meter.serving_sets, '.2f')} |"
            )
    return lines


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--paths", nargs="+", choices=PATHS, default=PATHS, help="default: all")
    sets_options(parser, calls=1500, sets=5, warmup=50, seconds=120, what="path")
    args = checked_sets(parser)
    return args


def main():
    args = arguments()
    started, check = time.strftime("%Y-%m-%d %H:%M"), cpu_check_ms()
    with ExitStack() as stack:
        paths = asyncio.run(run(args, stack))
    perf = paths[0].perf
    print(f"tools/call `echo`, revision {args.revision}, from {started}; work counted by {'perf' if perf else '/proc'}")
    print("\n".join(["", *table(paths, args.concurrency, perf)]))
    print(f"\nCPU check (bench/machine.py): {check:.0f} ms before, {cpu_check_ms():.0f} ms after")
    if any(sample.errors for each in paths for sample, _ in each.samples.values()):
        raise BenchError("some calls failed")


if __name__ == "__main__":
    run_as_script(main, "stack_floor")
