"""The console as the client under test, for the conformance suite's client scenarios.

    node conformance client --command "python tests/conformance/console_client.py" --scenario tools_call

The CLI starts its mock MCP server and runs this command with the server's URL as the last argument, the
scenario and its context in the environment. The console's part is played by the test process
(console_driver.py, at CONSOLE_CLIENT_DRIVER), which already has Django and the test database: this hands it
what the CLI gave, prints what it reports and exits with its status. So this imports nothing but the standard
library, and a scenario costs no Python start with Django, the app and the mcp SDK.
"""

import json
import os
import sys
import urllib.request

# Longer than the CLI waits for a scenario: the CLI, not this, decides when one has hung.
DRIVER_SECONDS = 300


def main() -> int:
    order = {
        "server_url": sys.argv[-1],
        "scenario": os.environ.get("MCP_CONFORMANCE_SCENARIO", "scenario"),
        "context": os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}",
    }
    request = urllib.request.Request(
        os.environ["CONSOLE_CLIENT_DRIVER"],
        data=json.dumps(order).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=DRIVER_SECONDS) as answer:
        report = json.load(answer)
    print(report["output"], end="", flush=True)
    return report["status"]


if __name__ == "__main__":
    sys.exit(main())
