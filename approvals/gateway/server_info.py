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


def capabilities(offered: set[str]) -> dict:
    """What the console tells clients it serves, given what some enabled server offers (see routes.offered_kinds).

    The console announces changes of every list it serves, whatever the servers announce: its lists
    change with each sync, and with the servers an admin enables or disables.
    """
    served = dict(CAPABILITIES)
    if "resources" in offered:
        served["resources"] = {"listChanged": True, **({"subscribe": True} if "subscribe" in offered else {})}
    if "prompts" in offered:
        served["prompts"] = {"listChanged": True}
    if "completions" in offered:
        served["completions"] = {}
    return served
