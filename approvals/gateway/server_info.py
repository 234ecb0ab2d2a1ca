"""What the console says about itself to clients of either era."""

from functools import cache
from importlib.metadata import PackageNotFoundError, version

NAME = "mcp-approval-console"
TITLE = "MCP Approval Console"
# Upstream log messages are relayed at the level a client asks for (logging/setLevel, or _meta in 2026-07-28).
CAPABILITIES = {"tools": {"listChanged": True}, "logging": {}}
INSTRUCTIONS = (
    "These tools belong to other MCP servers and reach them through an approval console. "
    "A call may wait until a person approves it; keep the request open meanwhile. "
    "A call that was denied, expired or cancelled answers with isError and the reason: "
    "read it and adapt rather than retrying the same call unchanged."
)


@cache
def console_version() -> str:
    try:
        return version("mcp-approval-console")
    except PackageNotFoundError:
        return "0"


def server_info() -> dict:
    return {"name": NAME, "title": TITLE, "version": console_version()}
