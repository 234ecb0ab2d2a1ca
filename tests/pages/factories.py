"""Rows the page tests build directly, as a sync would have left them."""

import hashlib

from approvals.models import Server, Tool


def make_server(name="Records", **fields):
    defaults = {"transport": Server.Transport.HTTP, "url": "https://records.example/mcp", "tool_prefix": "records_"}
    return Server.objects.create(name=name, **{**defaults, **fields})


def make_tool(server, name, status=Tool.Status.ACTIVE, reason="", **definition):
    definition = {"name": name, "inputSchema": {"type": "object"}, **definition}
    return Tool.objects.create(
        server=server,
        upstream_name=name,
        exposed_name=server.tool_prefix + name,
        definition=definition,
        digest=hashlib.sha256(name.encode()).hexdigest(),
        status=status,
        reason=reason,
    )
