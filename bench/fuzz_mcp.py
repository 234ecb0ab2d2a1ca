"""Malformed and hostile requests to /mcp, to find any that the console answers with a 5xx or not at all.

    .venv/bin/python bench/fuzz_mcp.py [--requests 10000] [--seconds 900] [--concurrency 8] [--seed N]

It starts the console under daphne on a free loopback port, with SQLite in a temporary
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
import json
import os
import random
import shlex
import sys
import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import httpx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (
    LEGACY_REVISION,
    MODERN_REVISION,
    BenchError,
    daphne,
    inherited_env,
    prepare_console,
    run_as_script,
)

REQUEST_TIMEOUT_SECONDS = 10.0
BODY_LIMIT = 1024 * 1024
TOOLS = [
    "demo_lookup_customer",
    "demo_search_orders",
    "demo_quote_order",
    "demo_delete_record",
    "demo_issue_refund",
    "demo_export_report",
    "demo_render_chart",
    "nope",
    "",
]
META = "io.modelcontextprotocol/"


class Raw:
    """A JSON fragment written into the body as it is: what json.dumps cannot or will not write."""

    def __init__(self, text: str):
        self.text = text

    def __repr__(self):
        return f"Raw({self.text[:60]!r})"


def dump(value) -> str:
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, dict):
        return "{" + ",".join(f"{dump(key)}:{dump(item)}" for key, item in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(dump(item) for item in value) + "]"
    return json.dumps(value, ensure_ascii=False)


def nested(rng: random.Random, depth: int):
    opening, closing = rng.choice([("[", "]"), ('{"a":', "}")])
    return Raw(opening * depth + "1" + closing * depth)


RAW_FRAGMENTS = [
    '"\\ud800"',
    '"a\\udc00b"',
    '"\\udbff\\udbff"',
    '"\\ude00\\ud83d"',
    '"\\u0000"',
    '"nul\\u0000inside"',
    "1e999",
    "-1e999",
    "1e-999",
    "-0",
    "1" + "0" * 5000,
    "-" + "9" * 4400,
    "123456789012345678901234567890",
    "0." + "0" * 2000 + "1",
    "9007199254740993",
    '"\\u202e\\u0301\\ufeff"',
]


def hostile(rng: random.Random):
    """A value of some wrong type, or an awkward one of the right type."""
    kind = rng.randrange(8)
    if kind == 0:
        return Raw(rng.choice(RAW_FRAGMENTS))
    if kind == 1:
        return nested(rng, rng.choice([10, 100, 900, 2000, 50_000]))
    if kind == 2:
        return rng.choice(
            [None, True, False, 0, -1, 1.5, 2**63, -(2**63) - 1, 10**40, [], {}, [None], {"": None}, "", " "]
        )
    if kind == 3:
        return rng.choice(["x" * rng.choice([1, 100, 5000, 100_000]), "😀" * 100, "\u0085\u2028", "../../etc"])
    if kind == 4:
        return {
            Raw(rng.choice(['"\\ud800"', '"\\u0000"', '""', '"a"'])): hostile(rng) for _ in range(rng.randint(1, 3))
        }
    if kind == 5:
        return [hostile(rng) for _ in range(rng.randint(0, 4))]
    if kind == 6:
        return rng.choice(TOOLS)
    return {"type": "text", "text": "x", "_meta": hostile(rng) if rng.random() < 0.5 else {}}


def modern_meta() -> dict:
    return {
        f"{META}protocolVersion": MODERN_REVISION,
        f"{META}clientCapabilities": {},
        f"{META}clientInfo": {"name": "fuzz", "version": "0"},
    }


def templates(session: str) -> list[tuple[str, dict, dict]]:
    """(era, message, headers) for each kind of request the endpoint serves."""
    legacy = {"Mcp-Session-Id": session, "MCP-Protocol-Version": LEGACY_REVISION}
    lookup = {"name": "demo_lookup_customer", "arguments": {"customer_id": "C001"}}

    def modern(method, **params):
        headers = {"MCP-Protocol-Version": MODERN_REVISION, "Mcp-Method": method}
        if "name" in params:
            headers["Mcp-Name"] = params["name"]
        message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": modern_meta()}}
        return "modern", message, headers

    return [
        modern("server/discover"),
        modern("tools/list", cursor="MA"),
        modern("tools/call", **lookup),
        modern("tools/call", name="demo_issue_refund", arguments={"order_id": "O1012", "amount": 5}),
        modern("tools/call", **lookup, requestState="x", inputResponses={"a": {}}),
        modern("subscriptions/listen", notifications={"toolsListChanged": True}),
        (
            "legacy",
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": LEGACY_REVISION,
                    "capabilities": {},
                    "clientInfo": {"name": "f", "version": "0"},
                },
            },
            {},
        ),
        ("legacy", {"jsonrpc": "2.0", "id": 2, "method": "ping"}, legacy),
        ("legacy", {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"cursor": "MA"}}, legacy),
        ("legacy", {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": lookup}, legacy),
        ("legacy", {"jsonrpc": "2.0", "id": 5, "method": "logging/setLevel", "params": {"level": "info"}}, legacy),
        ("legacy", {"jsonrpc": "2.0", "method": "notifications/initialized"}, legacy),
        ("legacy", {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 4}}, legacy),
        ("legacy", {"jsonrpc": "2.0", "id": 6, "result": {}}, legacy),
        ("legacy", {"jsonrpc": "2.0", "id": 7, "error": {"code": -1, "message": "no"}}, legacy),
        ("legacy", {"jsonrpc": "2.0", "id": 8, "method": "resources/list"}, legacy),
    ]


def paths(value, prefix=()):
    """Every place in a message a value could be put: each key and each list item, at any depth."""
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from paths(item, (*prefix, index))


def mutated(rng: random.Random, message: dict) -> dict:
    message = json.loads(json.dumps(message))
    for _ in range(rng.randint(1, 3)):
        places = [p for p in paths(message) if p]
        if not places:
            message[rng.choice(["id", "method", "params"])] = hostile(rng)
            continue
        # Mostly within params, where the handlers read: a broken envelope stops at the parser.
        inner = [p for p in places if p[0] == "params" and len(p) > 1]
        where = rng.choice(inner if inner and rng.random() < 0.75 else places)
        parent = message
        for step in where[:-1]:
            parent = parent[step]
        action = rng.random()
        if action < 0.15 and isinstance(parent, dict):
            parent.pop(where[-1], None)
        elif action < 0.25 and isinstance(parent, dict):
            parent[rng.choice(["extra", "_meta", "id", "params", "arguments", f"{META}x"])] = hostile(rng)
        else:
            parent[where[-1]] = hostile(rng)
    return message


def header_value(rng: random.Random) -> bytes:
    # What h11 lets a client send: no control characters but tab; obs-text bytes allowed.
    alphabet = bytes(range(0x20, 0x7F)) + bytes(range(0x80, 0x100)) + b"\t"
    return bytes(rng.choice(alphabet) for _ in range(rng.choice([0, 1, 8, 64, 4000]))).strip() or b"x"


CONTENT_TYPES = [
    "text/plain",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=x",
    "application/json; charset=utf-16",
    "APPLICATION/JSON",
    "application/jsonx",
    "application/json, text/plain",
    "",
]
ACCEPTS = ["application/json", "text/event-stream", "*/*", "text/html", "", "application/*;q=0", "text/*"]


@dataclass
class Probe:
    kind: str
    http_method: str
    path: str
    headers: dict
    body: bytes | None
    method: str | None = None  # the JSON-RPC method meant, for telling a hang from an open listen stream
    chunked: bool = False

    def describe(self) -> str:
        body = self.body if self.body is None or len(self.body) <= 600 else self.body[:600] + b"..."
        shown = {k: (v if len(v) <= 120 else v[:120] + "...") for k, v in self.headers.items()}
        return f"[{self.kind}] {self.http_method} {self.path} headers={shown} body={body!r}"


def base_headers(secret: str) -> dict:
    return {"Authorization": f"Bearer {secret}", "Accept": "application/json, text/event-stream"}


def probe(rng: random.Random, secret: str, session: str) -> Probe:
    kind = rng.choices(
        ["bytes", "json", "batch", "fields", "surrogate", "headers", "encoding", "http method"],
        weights=[8, 8, 5, 40, 12, 15, 6, 6],
    )[0]
    headers = {**base_headers(secret), "Content-Type": "application/json"}
    era, message, extra = rng.choice(templates(session))
    headers.update(extra)
    method = message.get("method")
    body: bytes | None
    if kind == "bytes":
        body = rng.randbytes(rng.choice([0, 1, 16, 1000, 100_000]))
    elif kind == "json":
        body = dump(hostile(rng)).encode("utf-8", "surrogatepass")
    elif kind == "batch":
        body = dump(
            [mutated(rng, message) if rng.random() < 0.5 else message for _ in range(rng.randint(0, 5))]
        ).encode()
    elif kind == "fields":
        body = dump(mutated(rng, message)).encode("utf-8", "surrogatepass")
    elif kind == "surrogate":
        text = dump(message)
        fragment = rng.choice(["\\ud800", "\\udfff", "\\udbff\\u0041", "\\u0000"])
        # Inside a string: every other quote opens one.
        spot = rng.choice([i for i, c in enumerate(text) if c == '"'][::2])
        body = (text[: spot + 1] + fragment + text[spot + 1 :]).encode()
    elif kind == "headers":
        body = dump(message).encode()
        for _ in range(rng.randint(1, 3)):
            name = rng.choice(
                [
                    "Authorization",
                    "Accept",
                    "Content-Type",
                    "MCP-Protocol-Version",
                    "Mcp-Method",
                    "Mcp-Name",
                    "Mcp-Session-Id",
                    "Origin",
                    "Host",
                    "Mcp-Param-Customer",
                    "Last-Event-ID",
                    "X-Forwarded-For",
                ]
            )
            choice = rng.random()
            if choice < 0.3:
                headers.pop(name, None)
            elif name == "Content-Type":
                headers[name] = rng.choice(CONTENT_TYPES)
            elif name == "Accept":
                headers[name] = rng.choice(ACCEPTS)
            elif name == "Authorization":
                headers[name] = rng.choice(["Bearer", "Basic eDp5", f"bearer {secret}", "Bearer mcpc_" + "x" * 4000])
            elif name == "MCP-Protocol-Version":
                headers[name] = rng.choice(
                    [LEGACY_REVISION, MODERN_REVISION, "2024-11-05", "1999-01-01", "", "x" * 300]
                )
            else:
                headers[name] = header_value(rng).decode("latin-1")
    elif kind == "encoding":
        text = dump(message)
        body = rng.choice(
            [
                text.encode("utf-16"),
                b"\xef\xbb\xbf" + text.encode(),
                text.encode()[: len(text) // 2],
                b"\xff" + text.encode(),
            ]
        )
    else:
        body = rng.choice([None, b"", dump(message).encode()])
        http = rng.choice(["GET", "DELETE", "PUT", "PATCH", "OPTIONS", "HEAD"])
        if rng.random() < 0.5:
            headers["Mcp-Session-Id"] = rng.choice([session, "0" * 64, "nope"])
        return Probe(kind, http, "/mcp", headers, body if http != "GET" else None, method)
    if len(body) > BODY_LIMIT:
        body = body[:BODY_LIMIT]
    path = rng.choices(["/mcp", "/mcp?x=1", "/mcp/", "//mcp"], weights=[94, 2, 2, 2])[0]
    return Probe(kind, "POST", path, headers, body, method, chunked=rng.random() < 0.05)


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
        demo = shlex.join([sys.executable, "-m", "approvals.demo.server"])
        reads = [
            ["--action", "allow", "--tool", glob, "--name", "fuzz: reads"]
            for glob in ("demo_lookup_*", "demo_search_*", "demo_quote_*")
        ]
        secret = prepare_console(env, ["demo", "--command", demo, "--prefix", "demo_"], reads, ["fuzz"])
        log = stack.enter_context(open(Path(var_dir) / "daphne.log", "w+b"))
        url, _ = daphne(stack, env, output=log)
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
