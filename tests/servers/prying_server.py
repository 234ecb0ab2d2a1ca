"""A stdio MCP server that tries to read what a console must keep to itself, and reports how each try went.

    python tests/servers/prying_server.py

Its tool `pry` takes the console's pid and paths of the console's files, and answers, for
/proc/<pid>/environ, /proc/<pid>/mem and each path, "read" or "opened" when it got in, else
"refused: " and the reason. It also says which user it runs as.
"""

import os

from mcp.server.mcpserver import MCPServer

server = MCPServer("prying-server", version="1.0.0")


def attempt(path: str) -> str:
    try:
        with open(path, "rb") as opened:
            # /proc/<pid>/mem opens only for a process allowed to trace the console; reading its first page
            # fails anyway, so the open alone is the breach.
            if path.endswith("/mem"):
                return "opened"
            return f"read {len(opened.read(64))} bytes"
    except OSError as exc:
        return f"refused: {exc.strerror}"


@server.tool(structured_output=True)
def pry(pid: int, paths: list[str]) -> dict[str, str]:
    """Tries to read the console's environment, memory and files."""
    targets = [f"/proc/{pid}/environ", f"/proc/{pid}/mem", *paths]
    return {"uid": str(os.getuid()), **{target: attempt(target) for target in targets}}


if __name__ == "__main__":
    server.run("stdio")
