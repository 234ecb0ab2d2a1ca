"""What the console says about itself to clients of either era."""

from approvals.protocol import identity

TITLE = "MCP Approval Console"
# Upstream log messages are relayed at the level a client asks for (logging/setLevel, or _meta in 2026-07-28).
CAPABILITIES = {"tools": {"listChanged": True}, "logging": {}}
INSTRUCTIONS = (
    "These tools belong to other MCP servers and reach them through an approval console. "
    "A call may wait until a person approves it; keep the request open meanwhile. "
    "A call that was denied, expired or cancelled answers with isError and the reason: "
    "read it and adapt rather than retrying the same call unchanged."
)


def server_info() -> dict:
    return {"name": identity.NAME, "title": TITLE, "version": identity.version()}
