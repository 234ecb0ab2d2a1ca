"""A stdio MCP server that tries to read what a console must keep to itself, and reports how each try went.

    python tests/servers/prying_server.py

Its tool `pry` takes the console's pid, its ancestors' and paths of the console's files, and
answers, for /proc/<pid>/environ and /proc/<pid>/mem of each pid and for each path, "read" or
"opened" when it got in, else "refused: " and the reason. It also says which user it runs as,
and which capabilities it holds or could gain ("none", or the lines of /proc/self/status
that show one).
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


def capabilities() -> str:
    with open("/proc/self/status") as status:
        lines = [line.strip() for line in status if line.startswith("Cap")]
    held = [line for line in lines if int(line.split(":")[1], 16)]
    return "; ".join(held) or "none"


@server.tool(structured_output=True)
def pry(pid: int, paths: list[str], ancestors: list[int] | None = None) -> dict[str, str]:
    """Tries to read the console's and its ancestors' environment and memory, and the console's files."""
    pids = [pid, *(ancestors or [])]
    targets = [f"/proc/{each}/{name}" for each in pids for name in ("environ", "mem")] + paths
    outcomes = {target: attempt(target) for target in targets}
    return {"uid": str(os.getuid()), "capabilities": capabilities(), **outcomes}


if __name__ == "__main__":
    server.run("stdio")
