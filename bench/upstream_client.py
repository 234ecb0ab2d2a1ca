"""What the upstream client costs the console per call, and what other HTTP clients would: CPU in this process.

    .venv/bin/python bench/upstream_client.py [--clients console httpx httpcore httpcore-asyncio aiohttp]
                                              [--concurrency 1 10] [--calls 3000] [--sets 6] [--revision 2025-11-25]

One upstream (tests/servers/sdk_server.py, the official SDK's MCPServer over Streamable HTTP), the same echo
tools/call through each client, one session per client:

- `console`: the console's own UpstreamSession over approvals/upstream/transport_http.py (aiohttp), what a call
  through the console spends in its upstream client, the session's bookkeeping included;
- `httpx`: an httpx.AsyncClient with the console's limits, one streamed POST read to its end;
- `httpcore`: httpcore's connections under a pool of this bench's own (an idle list; only the connection taken
  is looked at), anyio as httpcore's network backend, as under httpx;
- `httpcore-asyncio`: the same on a network backend of this bench's own, asyncio's streams and timeouts;
- `aiohttp`: an aiohttp.ClientSession with a TCPConnector of the same limits.

The last three do the same work around the request: the JSON-RPC message encoded, the console's headers, the
status and content type checked, the body read in chunks and its answer parsed with the console's SSE parser
and JSON-RPC reader. Per concurrency, sets of calls go to each client in turn (--sets of each, --calls per
client in all), so a spell of the shared machine weighs on all alike. Printed as a Markdown table per client:
calls a second, p50, and this process's CPU ms per call (user and system, from the kernel), each the mean and
range across the sets, and the upstream's CPU ms per call; then the machine's CPU check before and after.
"""

import argparse
import asyncio
import os
import sys
import time
from contextlib import AsyncExitStack, ExitStack

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gateway_overhead import Spread
from harness import BenchError, Sample, run_as_script, upstream
from http_clients import MAKERS
from machine import collector_off, cpu_check_ms, process_cpu_ms
from options import checked_sets, sets_options


class Measured:
    def __init__(self, name: str, client):
        self.name, self.client = name, client
        self.samples: dict[int, Sample] = {}
        self.cpu: dict[int, Spread] = {}
        self.upstream_ms: dict[int, float] = {}

    def at(self, concurrency: int) -> tuple[Sample, Spread]:
        self.samples.setdefault(concurrency, Sample(self.name, concurrency))
        return self.samples[concurrency], self.cpu.setdefault(concurrency, Spread())


async def calls(client, sample: Sample, count: int, deadline: float) -> None:
    numbers = iter(range(count))

    async def worker():
        for n in numbers:
            if time.monotonic() > deadline:
                return
            text, started = f"call {n}", time.perf_counter()
            try:
                ok = await client.call(text) == text
            except Exception:  # any failure is a failed call, counted
                ok = False
            if ok:
                sample.latencies.append(time.perf_counter() - started)
            else:
                sample.errors += 1

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(sample.concurrency)))
    sample.wall += time.perf_counter() - started


async def run(args, upstream_url: str, upstream_pid: int) -> list[Measured]:
    async with AsyncExitStack() as stack:
        measured = []
        for name in args.clients:
            client = MAKERS[name](upstream_url, args.revision)
            stack.push_async_callback(client.aclose)
            await client.start()
            measured.append(Measured(name, client))
        with collector_off():
            for concurrency in args.concurrency:
                print(f"concurrency {concurrency}…", file=sys.stderr)
                for each in measured:
                    await calls(each.client, Sample("warm-up", concurrency), args.warmup, time.monotonic() + 60)
                for n in range(args.sets):
                    share = args.calls // args.sets + (n < args.calls % args.sets)
                    for each in measured:
                        sample, spread = each.at(concurrency)
                        done = sample.calls + sample.errors
                        set_sample = Sample(each.name, concurrency)
                        cpu, up = time.process_time(), process_cpu_ms(upstream_pid) or 0.0
                        await calls(each.client, set_sample, share, time.monotonic() + args.seconds)
                        count = max(1, set_sample.calls + set_sample.errors)
                        spread.cpu.append((time.process_time() - cpu) * 1000 / count)
                        spread.share.append(set_sample.throughput)
                        each.upstream_ms[concurrency] = each.upstream_ms.get(concurrency, 0.0) + (
                            (process_cpu_ms(upstream_pid) or 0.0) - up
                        )
                        sample.latencies += set_sample.latencies
                        sample.errors += set_sample.errors
                        sample.wall += set_sample.wall
                        assert sample.calls + sample.errors == done + count
    return measured


def table(measured: list[Measured], concurrencies: list[int]) -> list[str]:
    lines = [
        "| concurrency | client | calls | errors | calls/s, mean (sets) | p50 ms | client CPU ms per call, mean (sets) "
        "| upstream CPU ms per call |",
        "|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for concurrency in concurrencies:
        for each in measured:
            sample, spread = each.at(concurrency)
            upstream_ms = each.upstream_ms.get(concurrency, 0.0) / max(1, sample.calls + sample.errors)
            lines.append(
                f"| {concurrency} | {each.name} | {sample.calls} | {sample.errors} "
                f"| {Spread.cell(spread.share, '.0f')} | {sample.percentile(50):.2f} "
                f"| {Spread.cell(spread.cpu, '.3f')} | {upstream_ms:.2f} |"
            )
    return lines


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", nargs="+", choices=list(MAKERS), default=list(MAKERS), help="default: all")
    sets_options(parser, calls=3000, sets=6, warmup=100, seconds=120, what="client")
    args = checked_sets(parser)
    return args


def main():
    args = arguments()
    started, check = time.strftime("%Y-%m-%d %H:%M", time.gmtime()), cpu_check_ms()
    with ExitStack() as stack:
        upstream_url, upstream_pid = upstream(stack)
        measured = asyncio.run(run(args, upstream_url, upstream_pid))
    print(f"tools/call `echo`, revision {args.revision}, from {started} UTC")
    print("\n".join(["", *table(measured, args.concurrency)]))
    print(f"\nCPU check (bench/machine.py): {check:.0f} ms before, {cpu_check_ms():.0f} ms after")
    if any(sample.errors for each in measured for sample in each.samples.values()):
        raise BenchError("some calls failed")


if __name__ == "__main__":
    run_as_script(main, "upstream_client")
