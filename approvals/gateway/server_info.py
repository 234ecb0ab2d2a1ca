"""What the console says about itself to clients of either era."""

from approvals.protocol import identity

TITLE = "MCP Approval Console"
# Upstream log messages are relayed at the level a client asks for (logging/setLevel, or _meta in 2026-07-28).
CAPABILITIES = {"tools": {"listChanged": True}, "logging": {}}
# Offered only while some enabled server offers them (no subscriptions, no list_changed for these yet).
SURFACE_CAPABILITIES = ("completions", "prompts", "resources")
INSTRUCTIONS = (
    "These tools belong to other MCP servers and reach them through an approval console. "
    "A call may wait until a person approves it; keep the request open meanwhile. "
    "A call that was denied, expired or cancelled answers with isError and the reason: "
    "read it and adapt rather than retrying the same call unchanged."
)


def server_info() -> dict:
    return {"name": identity.NAME, "title": TITLE, "version": identity.version()}


def capabilities(offered: set[str]) -> dict:
    """What the console tells clients it serves, given the capabilities some enabled server offers."""
    return {**CAPABILITIES, **{name: {} for name in SURFACE_CAPABILITIES if name in offered}}
