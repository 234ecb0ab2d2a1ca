"""Keeping the catalog of upstream tools, resources and prompts in step with what each server lists."""

import logging
import re
from dataclasses import dataclass, field

from asgiref.sync import async_to_sync
from django.db import transaction
from django.utils import timezone

from approvals.audit import chain
from approvals.audit.chain import SYSTEM
from approvals.catalog import surface
from approvals.catalog.specs import upstream_spec
from approvals.live import events
from approvals.models import Server, Tool, ToolChange
from approvals.protocol import permission_prompt
from approvals.protocol.tools import check_tool, tool_digest
from approvals.upstream import ServerIdentity, ServerSpec, UpstreamError, open_session
from approvals.upstream.session import decline
from approvals.webhooks import announce

log = logging.getLogger(__name__)

# Every major LLM API accepts tool names of this shape; MCP allows more ('.', up to 128).
EXPOSED_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
# The names of the console's own tools on /mcp, which no upstream tool may take.
RESERVED_NAMES = frozenset({permission_prompt.NAME})


@dataclass
class SyncReport:
    server: str
    ok: bool
    error: str = ""
    added: list = field(default_factory=list)
    changed: list = field(default_factory=list)
    removed: list = field(default_factory=list)
    rejected: list = field(default_factory=list)
    review: list = field(default_factory=list)  # added or changed, and awaiting an admin's review
    surface: dict = field(default_factory=dict)  # resources, templates and prompts changed, by kind (see surface)

    @property
    def changed_anything(self):
        return bool(self.added or self.changed or self.removed or self.rejected or self.review or self.surface)

    def summary(self):
        if not self.ok:
            return f"{self.server}: sync failed: {self.error}"
        parts = [
            f"{len(v)} {k}"
            for k, v in (
                ("added", self.added),
                ("changed", self.changed),
                ("removed", self.removed),
                ("rejected", self.rejected),
                ("awaiting review", self.review),
            )
            if v
        ]
        parts += [f"{kind.replace('_', ' ')} changed" for kind in self.surface]
        return f"{self.server}: " + (", ".join(parts) if parts else "no changes")


async def fetch_catalog(spec: ServerSpec) -> tuple[ServerIdentity, list[dict], dict[str, list[dict]]]:
    """The server's identity, its tools, and its other listings by kind (see surface.fetch_surface)."""
    # Declaring what calls' sessions declare: some servers list the tools that elicit only to clients that can answer.
    async with open_session(spec, on_request=decline) as session:
        return session.identity, await session.list_tools(), await surface.fetch_surface(session)


def exposed_name_for(prefix: str, upstream_name: str) -> tuple[str, str]:
    """The name clients see, and the reason it cannot be used (empty when it can)."""
    name = prefix + upstream_name.replace(".", "_")
    if not EXPOSED_NAME.match(name):
        return name, f"exposed name {name!r} is not 1-64 characters of A-Z, a-z, 0-9, '_' and '-'"
    return name, ""


def sync_server(server: Server) -> SyncReport:
    """Fetch a server's tools and apply them to the catalog; failures are recorded on the server."""
    try:
        identity, definitions, listings = async_to_sync(fetch_catalog)(upstream_spec(server))
    except UpstreamError as exc:
        record_failure(server, exc.message)
        return SyncReport(server.name, ok=False, error=exc.message)
    return apply_catalog(server, identity, definitions, listings)


def record_failure(server: Server, message: str):
    now = timezone.now()
    previous = Server.objects.filter(pk=server.pk).values_list("health", flat=True).first()
    Server.objects.filter(pk=server.pk).update(health=Server.Health.ERROR, last_error=message, last_checked_at=now)
    server.health, server.last_error, server.last_checked_at = Server.Health.ERROR, message, now
    if previous != Server.Health.ERROR:
        events.server_status(server)


@transaction.atomic
def apply_catalog(
    server: Server, identity: ServerIdentity, definitions: list[dict], listings: dict[str, list[dict]] | None = None
) -> SyncReport:
    report = SyncReport(server.name, ok=True)
    now = timezone.now()
    server = Server.objects.select_for_update().get(pk=server.pk)
    existing = {tool.upstream_name: tool for tool in server.tools.all()}
    listed = {d.get("name") for d in definitions if isinstance(d, dict)}
    for name, tool in existing.items():
        if name not in listed and tool.status != Tool.Status.REMOVED:
            remove_tool(tool, now, report)
    taken = set(Tool.objects.filter(status__in=Tool.HELD).exclude(server=server).values_list("exposed_name", flat=True))
    # Tools already holding a name keep it against newcomers of this listing.
    taken_here = {t.exposed_name: t.upstream_name for t in existing.values() if t.status in Tool.HELD}
    seen = set()
    for definition in definitions:
        name = definition.get("name") if isinstance(definition, dict) else None
        if not isinstance(name, str) or name in seen:
            reason = "tool has no string name" if not isinstance(name, str) else f"tool {name!r} is listed twice"
            report.rejected.append(reason)
            log.warning("%s: %s", server.name, reason)
            continue
        seen.add(name)
        status, reason, warnings, exposed = judge(server, definition, taken, taken_here)
        if status == Tool.Status.ACTIVE:
            status = reviewed_status(server, existing.get(name), tool_digest(definition))
            taken_here[exposed] = name
        apply_tool(server, existing.get(name), definition, exposed, status, reason, warnings, now, report)
    report.surface = surface.apply_surface(server, identity.capabilities, listings or {}, exposed_name_for, now)
    server.accept_next_listing = False
    capabilities_changed = server.capabilities != identity.capabilities
    server.revision = identity.revision
    server.server_info = identity.server_info
    server.capabilities = identity.capabilities
    server.instructions = identity.instructions
    recovered = server.health != Server.Health.OK
    server.health, server.last_error = Server.Health.OK, ""
    server.last_sync_at = server.last_checked_at = now
    server.save()
    if recovered:
        events.server_status(server)
    if report.changed_anything:
        changes = {
            "added": report.added,
            "changed": report.changed,
            "removed": report.removed,
            "rejected": report.rejected,
            "review": report.review,
            **report.surface,
        }
        chain.record("catalog.changed", SYSTEM, server=server, data=changes)
        announce.tools_need_review(server, report.review)
    if report.changed_anything or capabilities_changed:
        # What the console offers follows the servers' capabilities: every list may have come or gone.
        events.catalog_changed(server.pk, events.LISTS if capabilities_changed else changed_lists(report))
    return report


def changed_lists(report: SyncReport) -> list[str]:
    """The lists clients are told changed: tools, resources (templates among them) and prompts."""
    tools = report.added or report.changed or report.removed or report.rejected or report.review
    touched = {"tools"} if tools else set()
    touched |= {"resources" for kind in ("resources", "resource_templates") if kind in report.surface}
    touched |= {"prompts"} if "prompts" in report.surface else set()
    return [name for name in events.LISTS if name in touched]


def judge(server, definition, taken, taken_here):
    check = check_tool(definition)
    exposed, reason = exposed_name_for(server.tool_prefix, definition["name"])
    if check.errors:
        reason = "; ".join(check.errors)
    elif exposed in RESERVED_NAMES:
        reason = f"exposed name {exposed!r} is the console's own tool; give the server a tool prefix"
    elif not reason:
        owner = taken_here.get(exposed)
        if exposed in taken or (owner is not None and owner != definition["name"]):
            reason = f"exposed name {exposed!r} is already used by another tool"
    return (Tool.Status.REJECTED if reason else Tool.Status.ACTIVE), reason, check.warnings, exposed


def reviewed_status(server, tool, digest):
    """Active when the definition is the reviewed one or the server accepts it unread; else it awaits review."""
    if server.changes == Server.Changes.ACCEPT or server.accept_next_listing:
        return Tool.Status.ACTIVE
    if tool is not None and digest in (
        tool.reviewed_digest,
        tool.digest if tool.status == Tool.Status.ACTIVE else None,
    ):
        return Tool.Status.ACTIVE
    if tool is not None and tool.status == Tool.Status.DECLINED and digest == tool.digest:
        return Tool.Status.DECLINED
    return Tool.Status.NEEDS_REVIEW


def accept_unread(server, tool):
    """The server's setting (or the admin who added it) accepted this definition without a review."""
    if tool.status != Tool.Status.ACTIVE or tool.reviewed_digest == tool.digest:
        return
    reviewed, tool.reviewed_digest, tool.reviewed_definition = tool.reviewed_digest, tool.digest, tool.definition
    tool.save(update_fields=["reviewed_digest", "reviewed_definition"])
    note = (
        "accepted with the server when it was added"
        if server.accept_next_listing
        else "the server's changes are accepted"
    )
    data = {"tool": tool.exposed_name, "digest": tool.digest, "reviewed_digest": reviewed, "note": note}
    chain.record("tool.accepted", SYSTEM, server=server, tool=tool, data=data)


def apply_tool(server, tool, definition, exposed, status, reason, warnings, now, report):
    digest = tool_digest(definition)
    if tool is None:
        tool = Tool.objects.create(
            server=server,
            upstream_name=definition["name"],
            exposed_name=exposed,
            definition=definition,
            digest=digest,
            status=status,
            reason=reason,
            warnings=warnings,
            first_seen_at=now,
            last_changed_at=now,
            last_seen_at=now,
        )
        kind = ToolChange.Kind.REJECTED if status == Tool.Status.REJECTED else ToolChange.Kind.ADDED
        record_change(tool, kind, definition, digest, status, reason, now)
        (report.rejected if status == Tool.Status.REJECTED else report.added).append(exposed)
        if status == Tool.Status.NEEDS_REVIEW:
            report.review.append(exposed)
        accept_unread(server, tool)
        return
    kind = change_kind(tool, digest, status)
    previous = tool.digest
    tool.exposed_name, tool.warnings, tool.last_seen_at = exposed, warnings, now
    if kind:
        tool.definition, tool.digest, tool.status, tool.reason, tool.last_changed_at = (
            definition,
            digest,
            status,
            reason,
            now,
        )
    tool.save()
    if kind:
        record_change(tool, kind, definition, digest, status, reason, now, previous_digest=previous)
        bucket = {ToolChange.Kind.REJECTED: report.rejected, ToolChange.Kind.RESTORED: report.added}.get(
            kind, report.changed
        )
        bucket.append(exposed)
        if status == Tool.Status.NEEDS_REVIEW:
            report.review.append(exposed)
    accept_unread(server, tool)


def remove_tool(tool, now, report):
    record_change(
        tool, ToolChange.Kind.REMOVED, tool.definition, tool.digest, Tool.Status.REMOVED, "no longer listed", now
    )
    tool.status, tool.reason, tool.last_changed_at = Tool.Status.REMOVED, "no longer listed", now
    tool.save()
    report.removed.append(tool.exposed_name)


def change_kind(tool, digest, status):
    if status == Tool.Status.REJECTED and tool.status != Tool.Status.REJECTED:
        return ToolChange.Kind.REJECTED
    if digest != tool.digest:
        return ToolChange.Kind.CHANGED
    if status != tool.status:
        return ToolChange.Kind.RESTORED
    return None


def record_change(tool, kind, definition, digest, status, reason, now, previous_digest=""):
    ToolChange.objects.create(
        tool=tool,
        kind=kind,
        definition=definition,
        digest=digest,
        previous_digest=previous_digest,
        status=status,
        reason=reason,
        at=now,
    )


def test_connection(server: Server) -> tuple[ServerIdentity | None, int, str]:
    """Connect and list tools without changing the catalog: (identity, tool count, error)."""
    try:
        identity, definitions, _listings = async_to_sync(fetch_catalog)(upstream_spec(server))
    except UpstreamError as exc:
        return None, 0, exc.message
    return identity, len(definitions), ""
