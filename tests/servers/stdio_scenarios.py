"""Small stdio MCP servers that behave in one chosen, sometimes wrong, way.

    python tests/servers/stdio_scenarios.py SCENARIO

silent       reads every message and never answers
garbage      answers initialize, then writes a line that is not JSON
pushy        legacy; its tool `ask` asks the client to elicit and to sample (whatever
             the client declared), pings it, and reports what came back
pages-loop   legacy; tools/list hands out the same cursor forever
pages-many   legacy; tools/list never runs out of pages
malformed-surface legacy; answers resources/read, prompts/get and completion/complete in wrong shapes
mrtr         modern; its tool `confirm` answers input_required, then reports how it was retried
mrtr-forever modern; its tool `confirm` always answers input_required
family       legacy; starts a grandchild, and its tool `pids` names both processes
browser-step legacy; its tool `sign_in` refuses with -32042, naming a URL to visit first, and
             `signed_in` announces that URL elicitation complete before it answers
costly       legacy; tools whose schemas cost the most to check: `name` takes a slug that
             a backtracking matcher needs minutes to refuse, `echo` answers its text as
             structuredContent checked against that slug rule, `tangle` answers a value
             whose outputSchema forks at every one of 40 references

Only the standard library, so it starts in a few milliseconds.
"""

import json
import os
import subprocess
import sys
import time

SCENARIO = sys.argv[1]
REQUEST_STATE = "opaque ☃ state: keep me exactly"
BROWSER_STEP = {
    "mode": "url",
    "url": "https://auth.example/sign-in?step=1",
    "message": "Sign in to the example service.",
    "elicitationId": "sign-in-1",
}
GRANDCHILD = None
SLUG = {"type": "string", "pattern": "^[a-z0-9]+[a-z0-9-]*[a-z0-9]+$"}
TANGLE = {f"a{i}": {"anyOf": [{"$ref": f"#/$defs/a{i + 1}"}, {"$ref": f"#/$defs/a{i + 1}"}]} for i in range(40)}
COSTLY_TOOLS = [
    {"name": "name", "inputSchema": {"type": "object", "properties": {"slug": SLUG}}},
    {
        "name": "echo",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
        "outputSchema": {"type": "object", "properties": {"text": SLUG}},
    },
    {
        "name": "tangle",
        "inputSchema": {"type": "object"},
        "outputSchema": {
            "type": "object",
            "properties": {"value": {"$ref": "#/$defs/a0"}},
            "$defs": {**TANGLE, "a40": {"type": "string"}},
        },
    },
]


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def answer(msg_id, result):
    send({"jsonrpc": "2.0", "id": msg_id, "result": result})


def fail(msg_id, code, message):
    send({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})


def text(value):
    return {"content": [{"type": "text", "text": value}]}


def ask_client(msg_id, method, params):
    """Send a request to the client and read until its response arrives."""
    send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
    for line in sys.stdin:
        message = json.loads(line)
        if message.get("id") == msg_id and "method" not in message:
            return message


def legacy(message):
    msg_id, method, params = message.get("id"), message.get("method"), message.get("params") or {}
    if method == "initialize":
        answer(
            msg_id,
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": SCENARIO, "version": "1"},
            },
        )
    elif method == "tools/list" and SCENARIO == "pages-loop":
        answer(msg_id, {"tools": [{"name": "t", "inputSchema": {"type": "object"}}], "nextCursor": "again"})
    elif method == "tools/list" and SCENARIO == "pages-many":
        page = int(params.get("cursor") or 0)
        answer(
            msg_id, {"tools": [{"name": f"t{page}", "inputSchema": {"type": "object"}}], "nextCursor": str(page + 1)}
        )
    elif method == "tools/call" and SCENARIO == "pushy":
        token = (params.get("_meta") or {}).get("progressToken")
        send({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "asking"}})
        if token is not None:
            send(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/progress",
                    "params": {"progressToken": token, "progress": 1, "total": 2},
                }
            )
        elicited = ask_client(
            "s1",
            "elicitation/create",
            {
                "message": "Your name?",
                "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
            },
        )
        sampled = ask_client("s2", "sampling/createMessage", {"messages": [], "maxTokens": 5})
        pinged = ask_client("s3", "ping", {})
        report = {"elicitation": elicited, "sampling": sampled, "ping": pinged}
        answer(msg_id, text(json.dumps(report)))
    elif method == "tools/list" and SCENARIO == "browser-step":
        answer(
            msg_id, {"tools": [{"name": name, "inputSchema": {"type": "object"}} for name in ("sign_in", "signed_in")]}
        )
    elif method == "tools/call" and SCENARIO == "browser-step" and params["name"] == "sign_in":
        error = {"code": -32042, "message": "Sign in first", "data": {"elicitations": [BROWSER_STEP]}}
        send({"jsonrpc": "2.0", "id": msg_id, "error": error})
    elif method == "tools/call" and SCENARIO == "browser-step":
        complete = {"elicitationId": BROWSER_STEP["elicitationId"]}
        send({"jsonrpc": "2.0", "method": "notifications/elicitation/complete", "params": complete})
        answer(msg_id, text("signed in"))
    elif method == "tools/list" and SCENARIO == "costly":
        answer(msg_id, {"tools": COSTLY_TOOLS})
    elif method == "tools/call" and SCENARIO == "costly":
        structured = {"text": params["arguments"].get("text")} if params["name"] == "echo" else {"value": 1}
        answer(msg_id, text("done") | {"structuredContent": structured})
    elif method == "tools/call" and SCENARIO == "family":
        answer(msg_id, text(json.dumps({"child": os.getpid(), "grandchild": GRANDCHILD.pid})))
    elif method == "resources/read" and SCENARIO == "malformed-surface":
        answer(msg_id, {"contents": [{"uri": params.get("uri"), "text": "t", "blob": "AA=="}]})
    elif method == "prompts/get" and SCENARIO == "malformed-surface":
        answer(msg_id, {"messages": [{"role": "system", "content": {"type": "text", "text": "t"}}]})
    elif method == "completion/complete" and SCENARIO == "malformed-surface":
        answer(msg_id, {"completion": {"values": [1, 2]}})
    elif method == "tools/list":
        answer(msg_id, {"tools": []})
    elif msg_id is not None:
        fail(msg_id, -32601, f"Method not found: {method}")


def modern(message, first_ids):
    msg_id, method, params = message.get("id"), message.get("method"), message.get("params") or {}
    if method == "server/discover":
        answer(
            msg_id,
            {
                "supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {}},
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": SCENARIO, "version": "1"}},
            },
        )
    elif method == "tools/call":
        retry = "inputResponses" in params
        if retry and SCENARIO == "mrtr":
            problems = []
            if msg_id in first_ids:
                problems.append("the retry reused a request id")
            if params.get("requestState") != REQUEST_STATE:
                problems.append(f"requestState came back as {params.get('requestState')!r}")
            report = {"problems": problems, "inputResponses": params["inputResponses"], "meta": params.get("_meta")}
            answer(msg_id, text(json.dumps(report)) | {"resultType": "complete"})
            return
        first_ids.add(msg_id)
        answer(
            msg_id,
            {
                "resultType": "input_required",
                "inputRequests": {
                    "confirm": {
                        "method": "elicitation/create",
                        "params": {
                            "mode": "form",
                            "message": "Sure?",
                            "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}},
                        },
                    },
                },
                "requestState": REQUEST_STATE,
            },
        )
    elif msg_id is not None:
        fail(msg_id, -32601, f"Method not found: {method}")


def main():
    global GRANDCHILD
    if SCENARIO == "family":
        # A grandchild that lives on until something kills it: the pool must leave none behind.
        GRANDCHILD = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    first_ids = set()
    for line in sys.stdin:
        message = json.loads(line)
        if SCENARIO == "silent":
            continue
        if SCENARIO == "garbage" and message.get("method") == "tools/list":
            sys.stdout.write("this is not JSON\n")
            sys.stdout.flush()
            # Hangs after the garbage: the client must give up on its own.
            time.sleep(600)
        if SCENARIO.startswith("mrtr"):
            modern(message, first_ids)
        else:
            legacy(message)


if __name__ == "__main__":
    main()
