"""The requests bench/fuzz_mcp.py sends: malformed and hostile messages of either era, headers and bodies.

Every request comes from a generator seeded by the caller, so that a run can be repeated.
"""

import json
import random
from dataclasses import dataclass

from fuzz_values import dump, hostile
from harness import LEGACY_REVISION, MODERN_REVISION

BODY_LIMIT = 1024 * 1024
META = "io.modelcontextprotocol/"


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
