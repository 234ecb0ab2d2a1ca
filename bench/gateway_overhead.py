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
import itertools
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.fixtures.servers import SERVERS, free_port, running  # noqa: E402

LEGACY_REVISION = "2025-11-25"
MODERN_REVISION = "2026-07-28"
READY_SECONDS = 60
CALL_TIMEOUT_SECONDS = 30
ECHO = "echo"


class BenchError(RuntimeError):
    pass


@dataclass
class Sample:
    path: str
    concurrency: int
    latencies: list = field(default_factory=list)
    errors: int = 0
    wall: float = 0.0

    @property
    def calls(self):
        return len(self.latencies)

    @property
    def throughput(self):
        return self.calls / self.wall if self.wall else 0.0

    def percentile(self, p):
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))] * 1000 if ordered else float("nan")


class McpClient:
    """Just enough of an MCP client for tools/call: a session in the legacy era, _meta and headers in the modern one."""

    def __init__(self, http: httpx.AsyncClient, url: str, revision: str, token: str | None = None):
        self.http, self.url, self.revision = http, url, revision
        self.headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        if token:
            self.headers["Authorization"] = f"Bearer {token}"
        self.ids = itertools.count(1)

    @property
    def modern(self):
        return self.revision == MODERN_REVISION

    async def start(self):
        if self.modern:
            return
        info = {"name": "gateway-overhead-bench", "version": "1"}
        response = await self.post(
            {
                "jsonrpc": "2.0",
                "id": next(self.ids),
                "method": "initialize",
                "params": {"protocolVersion": self.revision, "capabilities": {}, "clientInfo": info},
            }
        )
        answer = self.answer(response)
        if "result" not in answer:
            raise BenchError(f"initialize at {self.url} failed: {answer}")
        if "mcp-session-id" in response.headers:
            self.headers["Mcp-Session-Id"] = response.headers["mcp-session-id"]
        self.headers["MCP-Protocol-Version"] = answer["result"]["protocolVersion"]
        await self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    async def call(self, tool: str, arguments: dict) -> dict:
        params = {"name": tool, "arguments": arguments}
        headers = {}
        if self.modern:
            params["_meta"] = {
                "io.modelcontextprotocol/protocolVersion": self.revision,
                "io.modelcontextprotocol/clientCapabilities": {},
            }
            headers = {"MCP-Protocol-Version": self.revision, "Mcp-Method": "tools/call", "Mcp-Name": tool}
        message = {"jsonrpc": "2.0", "id": next(self.ids), "method": "tools/call", "params": params}
        return self.answer(await self.post(message, headers))

    async def post(self, message: dict, headers: dict | None = None) -> httpx.Response:
        response = await self.http.post(self.url, json=message, headers={**self.headers, **(headers or {})})
        if response.status_code >= 400:
            raise BenchError(
                f"{message.get('method')} at {self.url}: HTTP {response.status_code} {response.text[:300]}"
            )
        return response

    @staticmethod
    def answer(response: httpx.Response) -> dict:
        """The JSON-RPC response in a JSON body or among an SSE stream's events."""
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            for data in events(response.text):
                message = json.loads(data)
                if "result" in message or "error" in message:
                    return message
            raise BenchError(f"an event stream with no response in it: {response.text[:300]}")
        return response.json() if response.content else {}


def events(stream: str):
    """The data of each SSE event that has any (a priming event carries none)."""
    lines = []
    for line in stream.splitlines() + [""]:
        if line.startswith("data:"):
            lines.append(line[5:].removeprefix(" "))
        elif not line and lines:
            if "".join(lines).strip():
                yield "\n".join(lines)
            lines = []


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


def manage(env: dict, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if done.returncode != 0:
        raise BenchError(f"manage.py {' '.join(args[:1])} failed:\n{done.stdout}{done.stderr}")
    return done.stdout


def console_env(var_dir: str) -> dict:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "console.settings",
        "LOG_LEVEL": "WARNING",
        "MCP_RATE_LIMIT_PER_MINUTE": str(10**9),
    }
    if not env.get("DATABASE_URL"):
        env["CONSOLE_VAR_DIR"] = var_dir
    return env


def prepare_console(env: dict, upstream_url: str, suffix: str) -> tuple[str, str]:
    """Migrate, add the upstream, allow its calls, make a token: (exposed tool name, secret)."""
    server, prefix = f"bench-{suffix}", f"bench_{suffix}_"
    manage(env, "migrate", "--noinput")
    manage(env, "add_server", server, "--url", upstream_url, "--prefix", prefix, "--accept-tools")
    manage(
        env,
        "add_rule",
        "--action",
        "allow",
        "--server",
        server,
        "--tool",
        f"{prefix}{ECHO}",
        "--position",
        "1",
        "--name",
        "gateway overhead bench",
    )
    secret = manage(env, "create_token", f"bench-{suffix}", "--tools", f"{prefix}{ECHO}").splitlines()[-1]
    return f"{prefix}{ECHO}", secret


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
    var_dir = tempfile.mkdtemp(prefix="console-bench-")
    env = console_env(var_dir)
    with ExitStack() as stack:
        stack.callback(shutil.rmtree, var_dir, ignore_errors=True)
        upstream_port, console_port = free_port(), free_port()
        stack.enter_context(
            running([sys.executable, str(SERVERS / "sdk_server.py"), str(upstream_port)], port=upstream_port)
        )
        upstream_url = f"http://127.0.0.1:{upstream_port}/mcp"
        tool, secret = prepare_console(env, upstream_url, suffix)
        if env.get("DATABASE_URL"):
            stack.callback(manage, env, "revoke_token", f"bench-{suffix}")
        daphne = [
            sys.executable,
            "-m",
            "daphne",
            "-b",
            "127.0.0.1",
            "-p",
            str(console_port),
            "console.asgi:application",
        ]
        stack.enter_context(running(daphne, port=console_port, env=env))
        print(
            f"upstream {upstream_url}; console http://127.0.0.1:{console_port}/mcp "
            f"({'DATABASE_URL' if env.get('DATABASE_URL') else 'SQLite in ' + var_dir}"
            f"{', REDIS_URL' if env.get('REDIS_URL') else ''})",
            file=sys.stderr,
        )
        pairs = asyncio.run(bench(args, upstream_url, f"http://127.0.0.1:{console_port}/mcp", tool, secret))
    print(table(pairs, args.revision))
    if any(s.errors for pair in pairs for s in pair):
        sys.exit(1)


def run_as_script(main, name: str):
    # A plain kill still unwinds main's ExitStack, so nothing started there outlives the run.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        main()
    except BenchError as exc:
        sys.exit(f"{name}: {exc}")


if __name__ == "__main__":
    run_as_script(main, "bench")
