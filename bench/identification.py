"""What identifying a kept client token costs /mcp on the services setup: on the event loop, or in a thread.

    .venv/bin/python bench/identification.py [--requests 2000] [--sets 5] [--concurrency 1 10]

PostgreSQL (a database of its own, identification_bench and the name of DATABASE_URL's database, created and
dropped here) and Redis (REDIS_URL). In this one process, under the console's settings, one event loop
identifies the same kept token (gateway.auth.identify) `--requests` times a set, `--concurrency` at a time, by
each path in turn, the order alternating from set to set: `loop`, as the gateway does; `thread`, with the loop's
path declined, so that the stamp, the token and the rate count go to one of the loop's shared threads. Printed:
per path and concurrency, the wall time and this process's CPU time (every thread's) per identification, in µs,
the median of the sets and their range; the machine's CPU check before and after (bench/machine.py).
"""

import argparse
import asyncio
import os
import statistics
import sys
import time
from contextlib import ExitStack

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import manage, run_as_script, setup_env
from machine import collector_off, cpu_check_ms

BENCH_DATABASE = "identification_bench"
PATHS = ("loop", "thread")


async def identify_all(identify, request, requests: int, concurrency: int) -> tuple[float, float]:
    """Wall and CPU µs per identification of `requests`, `concurrency` at a time."""
    left = iter(range(requests))

    async def worker():
        for _ in left:
            await identify(request)

    wall, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return (time.perf_counter() - wall) * 1e6 / requests, (time.process_time() - cpu) * 1e6 / requests


async def measure(args, secret: str) -> dict:
    from approvals.gateway import auth
    from approvals.gateway.application import McpRequest

    scope = {
        "method": "POST",
        "headers": [(b"host", b"127.0.0.1"), (b"authorization", f"Bearer {secret}".encode())],
        "client": ("127.0.0.1", 50000),
        "scheme": "http",
    }
    request = McpRequest(scope, b"")
    on_the_loop = auth.admitted_on_the_loop

    async def declined(secret, credential):
        return None

    figures = {(path, c): [] for path in PATHS for c in args.concurrency}
    # Warm both paths: the token's use noted, its lookups kept, each path's connections open.
    for path in PATHS:
        auth.admitted_on_the_loop = on_the_loop if path == "loop" else declined
        await identify_all(auth.identify, request, 50, 1)
    for number in range(args.sets):
        for path in PATHS if number % 2 == 0 else PATHS[::-1]:
            auth.admitted_on_the_loop = on_the_loop if path == "loop" else declined
            for concurrency in args.concurrency:
                figures[path, concurrency].append(
                    await identify_all(auth.identify, request, args.requests, concurrency)
                )
    auth.admitted_on_the_loop = on_the_loop
    return figures


def summary(values: list[float]) -> str:
    return f"{statistics.median(values):.0f} ({min(values):.0f}–{max(values):.0f})"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=2000, help="identifications per set and path (default 2000)")
    parser.add_argument("--sets", type=int, default=5, help="sets per path (default 5)")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 10])
    args = parser.parse_args()
    checked = cpu_check_ms()
    with ExitStack() as stack:
        env = setup_env(stack, "services", BENCH_DATABASE)
        manage(env, "migrate", "--noinput")
        secret = manage(env, "create_token", "bench").splitlines()[-1]
        os.environ.update({name: env[name] for name in ("DATABASE_URL", "REDIS_URL", "MCP_RATE_LIMIT_PER_MINUTE")})
        os.environ["DJANGO_SETTINGS_MODULE"] = "console.settings"
        import django

        django.setup()
        with collector_off():
            figures = asyncio.run(measure(args, secret))
        from django.db import connections

        connections.close_all()
    print("| path | concurrency | wall µs per identification, median (sets) | CPU µs per identification |")
    print("|---|---:|---:|---:|")
    for (path, concurrency), sets in figures.items():
        wall, cpu = [w for w, _ in sets], [c for _, c in sets]
        print(f"| {path} | {concurrency} | {summary(wall)} | {summary(cpu)} |")
    print(f"\nCPU check (bench/machine.py): {checked:.0f} ms before, {cpu_check_ms():.0f} ms after")


if __name__ == "__main__":
    run_as_script(main, "identification")
