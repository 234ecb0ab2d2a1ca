"""What the console costs a tools/call: the same echo call, direct to an upstream and through /mcp.

    .venv/bin/python bench/gateway_overhead.py [--calls 300] [--concurrency 1 10] [--seconds 60]

It starts tests/servers/sdk_server.py (the official SDK's MCPServer over Streamable
HTTP) and the console under daphne, each on a free loopback port, the console with
SQLite in a temporary directory. With DATABASE_URL (and REDIS_URL) set, the console
uses those: it migrates that database and adds a server, an allow rule and a token
named bench-<random>; the token is revoked at the end, the rest stays (the audit log
is append-only anyway). Each concurrency is measured direct and through the console
side by side; a Markdown table with the ratios is printed; everything started is stopped.

The client is raw httpx speaking JSON-RPC, not the SDK's client, whose own per-call
work (pydantic models, a task group per stream) would weigh on both paths and blur
the console's share. Both paths use the same revision, one session each and one
connection pool. A call through the console is a real one: recorded, validated,
decided by the allow rule, audited, forwarded, its result checked. The console's
per-token rate limit is lifted for the run (MCP_RATE_LIMIT_PER_MINUTE).
"""

import argparse
import asyncio
import json
import os
import secrets
import sys
import time
from contextlib import ExitStack

import httpx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (
    LEGACY_REVISION,
    MODERN_REVISION,
    BenchError,
    McpClient,
    Sample,
    daphne,
    inherited_env,
    manage,
    prepare_console,
    run_as_script,
    upstream,
)

READY_SECONDS = 60
CALL_TIMEOUT_SECONDS = 30
ECHO = "echo"


def echoed(answer: dict, text: str) -> bool:
    result = answer.get("result") or {}
    content = result.get("content") or [{}]
    return not result.get("isError") and content[0].get("text") == text


async def measure(
    client: McpClient, tool: str, sample: Sample, calls: int, warmup: int, deadline_seconds: float
) -> Sample:
    for n in range(warmup):
        if not echoed(await client.call(tool, {"message": f"warm {n}"}), f"warm {n}"):
            raise BenchError(f"{sample.path}: the warm-up call did not echo")
    numbers = iter(range(calls))
    deadline = time.monotonic() + deadline_seconds

    async def worker():
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
    await asyncio.gather(*(worker() for _ in range(sample.concurrency)))
    sample.wall = time.perf_counter() - started
    return sample


async def wait_until_it_answers(client: McpClient, tool: str, what: str):
    """Poll until an echo goes through: daphne listening is not yet the endpoint working."""
    deadline = time.monotonic() + READY_SECONDS
    last = None
    while time.monotonic() < deadline:
        try:
            await client.start()
            answer = await client.call(tool, {"message": "ready?"})
            if echoed(answer, "ready?"):
                return
            last = f"the call did not echo: {json.dumps(answer)[:300]}"
        except (httpx.HTTPError, BenchError, ValueError, KeyError) as exc:
            last = exc
        await asyncio.sleep(0.5)
    raise BenchError(f"{what} did not answer a tools/call within {READY_SECONDS}s: {last}")


def prepare(env: dict, upstream_url: str, suffix: str) -> tuple[str, str]:
    """Migrate, add the upstream, allow its calls, make a token: (exposed tool name, secret)."""
    server, prefix = f"bench-{suffix}", f"bench_{suffix}_"
    tool = f"{prefix}{ECHO}"
    allow = ["--action", "allow", "--server", server, "--tool", tool, "--position", "1"]
    secret = prepare_console(
        env,
        [server, "--url", upstream_url, "--prefix", prefix],
        [[*allow, "--name", "gateway overhead bench"]],
        [f"bench-{suffix}", "--tools", tool],
    )
    return tool, secret


def ratio(console: float, direct: float) -> str:
    return f"×{console / direct:.2f}" if direct else "-"


def table(pairs: list[tuple[Sample, Sample]], revision: str) -> str:
    lines = [
        f"tools/call `echo`, revision {revision}; ratio = through the console ÷ direct",
        "",
        "| concurrency | path | calls | errors | calls/s | p50 ms | p99 ms |",
        "|---:|---|---:|---:|---:|---:|---:|",
    ]
    for direct, console in pairs:
        for s in (direct, console):
            lines.append(
                f"| {s.concurrency} | {s.path} | {s.calls} | {s.errors} | {s.throughput:.0f} "
                f"| {s.percentile(50):.1f} | {s.percentile(99):.1f} |"
            )
        lines.append(
            f"| {direct.concurrency} | ratio | | | {ratio(console.throughput, direct.throughput)} "
            f"| {ratio(console.percentile(50), direct.percentile(50))} "
            f"| {ratio(console.percentile(99), direct.percentile(99))} |"
        )
    return "\n".join(lines)


async def bench(args, upstream_url: str, console_url: str, tool: str, secret: str) -> list[tuple[Sample, Sample]]:
    limits = httpx.Limits(
        max_connections=max(args.concurrency) * 2, max_keepalive_connections=max(args.concurrency) * 2
    )
    async with httpx.AsyncClient(timeout=CALL_TIMEOUT_SECONDS, limits=limits) as http:
        direct = McpClient(http, upstream_url, args.revision)
        through = McpClient(http, console_url, args.revision, secret)
        await wait_until_it_answers(direct, ECHO, "the upstream")
        await wait_until_it_answers(through, tool, "the console's /mcp")
        pairs = []
        for concurrency in args.concurrency:
            pairs.append(
                (
                    await measure(direct, ECHO, Sample("direct", concurrency), args.calls, args.warmup, args.seconds),
                    await measure(through, tool, Sample("console", concurrency), args.calls, args.warmup, args.seconds),
                )
            )
        return pairs


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=300, help="calls per path and concurrency (default 300)")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 10], help="default: 1 10")
    parser.add_argument("--seconds", type=float, default=60, help="at most this long per path and concurrency")
    parser.add_argument("--warmup", type=int, default=20, help="unmeasured calls before each measurement")
    parser.add_argument("--revision", default=LEGACY_REVISION, choices=[LEGACY_REVISION, MODERN_REVISION])
    args = parser.parse_args()
    if args.calls < 1 or min(args.concurrency) < 1:
        parser.error("--calls and --concurrency must be at least 1")

    suffix = secrets.token_hex(3)
    with ExitStack() as stack:
        env, var_dir = inherited_env(stack, "console-bench-")
        upstream_url = upstream(stack)
        tool, secret = prepare(env, upstream_url, suffix)
        if env.get("DATABASE_URL"):
            stack.callback(manage, env, "revoke_token", f"bench-{suffix}")
        console_url = f"{daphne(stack, env)[0]}/mcp"
        print(
            f"upstream {upstream_url}; console {console_url} "
            f"({'DATABASE_URL' if env.get('DATABASE_URL') else 'SQLite in ' + var_dir}"
            f"{', REDIS_URL' if env.get('REDIS_URL') else ''})",
            file=sys.stderr,
        )
        pairs = asyncio.run(bench(args, upstream_url, console_url, tool, secret))
    print(table(pairs, args.revision))
    if any(s.errors for pair in pairs for s in pair):
        sys.exit(1)


if __name__ == "__main__":
    run_as_script(main, "bench")
