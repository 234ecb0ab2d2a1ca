"""A legacy-era stdio MCP server whose tools/list pages come from a JSON file.

    python scripted_server.py SCENARIO.json

The scenario: {"pages": [[tool, ...], ...], "die_on_page": N, "announce": bool or
method, "resources": [resource, ...], "prompts": [prompt, ...]}. Each page after the first is reached through
nextCursor; on page N the process exits without answering, as a crashing server
would. With "announce" set, every ping is preceded by notifications/tools/list_changed
(or the notification it names). With "resources", the server offers them, and no
resource templates (resources/templates/list is not found); with "prompts", the
server offers them, and prompts/get answers with the prompt's description. The file is re-read on
every request, so a test can change the catalog between syncs. A tools/call is
answered with the tool's name and appended to SCENARIO.json.calls, one name a
line, so a test can tell which calls reached the server.
"""

import json
import sys


def main(path):
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message:
            continue
        method, params = message.get("method"), message.get("params") or {}
        if method == "initialize":
            with open(path) as f:
                offered = json.load(f)
            capabilities = {"tools": {"listChanged": True}}
            capabilities |= {kind: {} for kind in ("resources", "prompts") if kind in offered}
            result = {
                "protocolVersion": "2025-06-18",
                "capabilities": capabilities,
                "serverInfo": {"name": "scripted", "version": "1.0"},
            }
        elif method == "resources/list":
            with open(path) as f:
                result = {"resources": json.load(f)["resources"]}
        elif method == "prompts/list":
            with open(path) as f:
                result = {"prompts": json.load(f)["prompts"]}
        elif method == "prompts/get":
            with open(path) as f:
                prompt = next(p for p in json.load(f)["prompts"] if p["name"] == params.get("name"))
            text = {"type": "text", "text": prompt.get("description", "")}
            result = {"messages": [{"role": "user", "content": text}]}
        elif method == "tools/list":
            with open(path) as f:
                scenario = json.load(f)
            page = int(params.get("cursor") or 0)
            if page == scenario.get("die_on_page"):
                sys.exit(3)
            result = {"tools": scenario["pages"][page]}
            if page + 1 < len(scenario["pages"]):
                result["nextCursor"] = str(page + 1)
        elif method == "tools/call":
            with open(path + ".calls", "a") as log:
                log.write(params.get("name", "") + "\n")
            result = {"content": [{"type": "text", "text": f"ran {params.get('name')}"}]}
        elif method == "ping":
            with open(path) as f:
                announce = json.load(f).get("announce")
            if announce:
                method = announce if isinstance(announce, str) else "notifications/tools/list_changed"
                send({"jsonrpc": "2.0", "method": method})
            result = {}
        else:
            answer(message["id"], error={"code": -32601, "message": f"Method not found: {method}"})
            continue
        answer(message["id"], result=result)


def answer(msg_id, **outcome):
    send({"jsonrpc": "2.0", "id": msg_id, **outcome})


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1])
