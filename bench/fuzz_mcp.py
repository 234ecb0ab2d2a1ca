"""Malformed and hostile requests to /mcp, to find any that the console answers with a 5xx or not at all.

    .venv/bin/python bench/fuzz_mcp.py [--requests 10000] [--seconds 900] [--concurrency 8] [--seed N]

It starts the console under granian on a free loopback port, with SQLite in a temporary
directory (with DATABASE_URL and REDIS_URL set, those), the demo server over stdio as its
upstream, an allow rule for the demo's read-only tools, a client token and a legacy session;
held calls and input requests give up after two seconds. Then it sends the requests, each
made by a generator seeded with --seed, so that a run can be repeated:

- random bytes, JSON that is no message, batches;
- messages of either era with fields (jsonrpc, id, method, params and what each method reads
  in its params, _meta included) replaced by values of the wrong type, removed, or added;
- unpaired surrogates written as JSON escapes in ids, methods, keys and values, NUL
  characters, huge and tiny numbers, numbers of thousands of digits, deep nesting within
  the body limit;
- wrong, missing or odd Content-Type, Accept, Authorization, protocol-version, Mcp-Method,
  Mcp-Name and Mcp-Session-Id headers, bodies in UTF-16 or sent chunked, other HTTP methods.

It prints the count of each HTTP status, then every request that got a 5xx, a JSON-RPC
internal error (-32603), no answer within REQUEST_TIMEOUT_SECONDS (a hang: an event stream
counts as answered once it carries the response, or, for subscriptions/listen, once it is
open), or a broken connection, with what was sent, and every traceback the console logged.
It exits 1 if there was any, or if the console no longer answers a plain request at the end.
"""

import argparse
import asyncio
import collections
import os
import random
import sys
import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import httpx

from approvals.demo import COMMAND_LINE

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fuzz_probes import Probe, base_headers, modern_meta, probe
from harness import (
    LEGACY_REVISION,
    MODERN_REVISION,
    BenchError,
    console_process,
    inherited_env,
    prepare_console,
    run_as_script,
)

REQUEST_TIMEOUT_SECONDS = 10.0


@dataclass
class Outcome:
    status: int | str
    problem: str = ""


async def answered(response: httpx.Response, probe: Probe) -> str:
    """'' once the response carries its answer; else what is wrong with it."""
    if not response.headers.get("content-type", "").startswith("text/event-stream"):
        body = await response.aread()
        return "a JSON-RPC internal error" if b'"code":-32603' in body else ""
    if probe.http_method == "GET":
        return ""
    seen = b""
    async for chunk in response.aiter_bytes():
        seen += chunk
        if b'"code":-32603' in seen:
            return "a JSON-RPC internal error in the stream"
        if b'"result"' in seen or b'"error"' in seen:
            return ""
        if probe.method == "subscriptions/listen" and b"acknowledged" in seen:
            return ""
    return "the stream ended without an answer"


async def chunks(body: bytes):
    """The body sent chunked, with no Content-Length."""
    for start in range(0, len(body), 4096):
        yield body[start : start + 4096]


async def send(http: httpx.AsyncClient, url: str, probe: Probe) -> Outcome:
    headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in probe.headers.items()]
    content = probe.body
    if probe.chunked and content is not None:
        content = chunks(content)
    try:
        async with asyncio.timeout(REQUEST_TIMEOUT_SECONDS):
            async with http.stream(probe.http_method, url + probe.path, headers=headers, content=content) as response:
                problem = await answered(response, probe)
                if response.status_code >= 500:
                    problem = problem or f"HTTP {response.status_code}"
                return Outcome(response.status_code, problem)
    except TimeoutError:
        return Outcome("hang", f"no answer within {REQUEST_TIMEOUT_SECONDS:g} s")
    except httpx.HTTPError as exc:
        return Outcome("broken", f"{type(exc).__name__}: {exc}")


async def fuzz(url: str, secret: str, session: str, args) -> tuple[collections.Counter, list]:
    rng = random.Random(args.seed)
    probes = [probe(rng, secret, session) for _ in range(args.requests)]
    statuses, failures = collections.Counter(), []
    queue = iter(probes)
    deadline = time.monotonic() + args.seconds
    limits = httpx.Limits(max_connections=args.concurrency * 2)
    async with httpx.AsyncClient(timeout=REQUEST_TIMEOUT_SECONDS, limits=limits) as http:

        async def worker():
            for item in queue:
                if time.monotonic() > deadline:
                    return
                outcome = await send(http, url, item)
                statuses[outcome.status] += 1
                if outcome.problem:
                    failures.append((outcome, item))

        await asyncio.gather(*(worker() for _ in range(args.concurrency)))
        alive = await http.post(
            url + "/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": modern_meta()}},
            headers={**base_headers(secret), "MCP-Protocol-Version": MODERN_REVISION, "Mcp-Method": "server/discover"},
        )
        if alive.status_code != 200:
            failures.append((Outcome(alive.status_code, "the console no longer answers server/discover"), None))
    return statuses, failures


def start_session(url: str, secret: str) -> str:
    params = {"protocolVersion": LEGACY_REVISION, "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "0"}}
    headers = {**base_headers(secret), "Content-Type": "application/json"}
    response = httpx.post(
        url + "/mcp", json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}, headers=headers
    )
    if response.status_code != 200:
        raise BenchError(f"initialize failed: {response.status_code} {response.text[:300]}")
    session = response.headers["Mcp-Session-Id"]
    httpx.post(
        url + "/mcp",
        json={"jsonrpc": "2.0", "method": "notifications/initialized"},
        headers={**headers, "Mcp-Session-Id": session, "MCP-Protocol-Version": LEGACY_REVISION},
    )
    return session


def tracebacks(log: str) -> list[str]:
    """Each traceback in the console's log, but Django's for a Host it does not serve (a 400, logged as a warning)."""
    found, lines = [], log.splitlines()
    for index, line in enumerate(lines):
        if line.startswith("Traceback"):
            end = next((i for i in range(index + 1, len(lines)) if lines[i] and not lines[i].startswith(" ")), index)
            if not lines[end].startswith("django.core.exceptions.DisallowedHost"):
                # What was being done, and the innermost frames: a recursion's would fill screens.
                found.append(
                    "\n".join([*lines[max(0, index - 1) : index + 1], *lines[max(index + 1, end - 8) : end + 1]])
                )
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=10_000)
    parser.add_argument("--seconds", type=float, default=900, help="stop sending after this long (default 900)")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--seed", type=int, default=random.SystemRandom().randrange(2**32))
    args = parser.parse_args()

    with ExitStack() as stack:
        env, var_dir = inherited_env(
            stack,
            "console-fuzz-",
            APPROVAL_TIMEOUT_SECONDS="2",
            INPUT_TIMEOUT_SECONDS="2",
            UPSTREAM_CALL_TIMEOUT_SECONDS="5",
        )
        demo = COMMAND_LINE
        reads = [
            ["--action", "allow", "--tool", glob, "--name", "fuzz: reads"]
            for glob in ("demo_lookup_*", "demo_search_*", "demo_quote_*")
        ]
        secret = prepare_console(env, ["demo", "--command", demo, "--prefix", "demo_"], reads, ["fuzz"])
        log = stack.enter_context(open(Path(var_dir) / "web.log", "w+b"))
        url, _ = console_process(stack, env, output=log)
        session = start_session(url, secret)
        print(f"console {url}/mcp; {args.requests} requests, seed {args.seed}", file=sys.stderr)
        started = time.monotonic()
        statuses, failures = asyncio.run(fuzz(url, secret, session, args))
        elapsed = time.monotonic() - started
        log.seek(0)
        logged = tracebacks(log.read().decode(errors="replace"))

    print(f"{sum(statuses.values())} requests in {elapsed:.0f} s, seed {args.seed}")
    for status, count in sorted(statuses.items(), key=lambda item: str(item[0])):
        print(f"  {status}: {count}")
    for outcome, item in failures:
        print(f"\n{outcome.status}: {outcome.problem}\n  {item.describe() if item else ''}")
    for text in logged:
        print(f"\nthe console logged:\n{text}")
    print(f"\n{len(failures)} failures (5xx, internal errors, hangs, broken connections), {len(logged)} tracebacks")
    if failures or logged:
        sys.exit(1)


if __name__ == "__main__":
    run_as_script(main, "fuzz")
