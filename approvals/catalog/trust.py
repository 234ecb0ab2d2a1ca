"""What clients may see of a catalog entry, a tool or a resource, template or prompt alike.

The server's setting says whether a new or changed definition is accepted at once
or waits for an admin's review, and the digest an admin accepted is kept. How a
listing's change is found, and its history row, are catalog.change_detection's.
"""

import re

from approvals.audit import chain
from approvals.audit.chain import SYSTEM
from approvals.catalog.models import Change, Server, Tool
from approvals.catalog.surface_models import Prompt, Resource, ResourceTemplate

Status = Tool.Status
Kind = Change.Kind

# How audit events name each kind of entry (tool.accepted, prompt.rejected, ...).
NOUNS = {Tool: "tool", Resource: "resource", ResourceTemplate: "template", Prompt: "prompt"}


# Every major LLM API accepts tool names of this shape; MCP allows more ('.', up to 128).
EXPOSED_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def exposed_name_for(prefix: str, upstream_name: str) -> tuple[str, str]:
    """The name clients see, and the reason it cannot be used (empty when it can)."""
    name = prefix + upstream_name.replace(".", "_")
    if not EXPOSED_NAME.match(name):
        return name, f"exposed name {name!r} is not 1-64 characters of A-Z, a-z, 0-9, '_' and '-'"
    return name, ""


def listed_name(item) -> str:
    """The name an entry goes by as last listed; a resource or template keeps its accepted one while a change waits."""
    if isinstance(item, Tool):
        return item.exposed_name
    return exposed_name_for(item.server.tool_prefix, str(item.definition.get("name") or ""))[0][:300]


def noun_of(item) -> str:
    return NOUNS[type(item)]


def label_of(item) -> str:
    """What clients know the entry by: its exposed name, or the URI (or template) a resource is read by."""
    return getattr(item, "uri", "") or item.exposed_name


def reviewed_status(server, item, digest):
    """Active when the definition is the reviewed one or the server accepts it unread; else it awaits review."""
    if server.changes == Server.Changes.ACCEPT or server.accept_next_listing:
        return Status.ACTIVE
    if item is not None and digest in (
        item.reviewed_digest,
        item.digest if item.status == Status.ACTIVE else None,
    ):
        return Status.ACTIVE
    if item is not None and item.status == Status.DECLINED and digest == item.digest:
        return Status.DECLINED
    return Status.NEEDS_REVIEW


def record_decision(verb: str, actor, item, reviewed: str, note: str) -> None:
    """The audit event of an entry accepted or rejected, naming both digests."""
    noun = noun_of(item)
    data = {noun: label_of(item), "digest": item.digest, "reviewed_digest": reviewed, "note": note}
    tool = item if isinstance(item, Tool) else None
    chain.record(f"{noun}.{verb}", actor, server=item.server, tool=tool, data=data)


def accept_unread(server, item):
    """The server's setting (or the admin who added it) accepted this definition without a review."""
    if item.status != Status.ACTIVE or item.reviewed_digest == item.digest:
        return
    reviewed, item.reviewed_digest, item.reviewed_definition = item.reviewed_digest, item.digest, item.definition
    item.save(update_fields=["reviewed_digest", "reviewed_definition"])
    note = (
        "accepted with the server when it was added"
        if server.accept_next_listing
        else "the server's changes are accepted"
    )
    record_decision("accepted", SYSTEM, item, reviewed, note)
