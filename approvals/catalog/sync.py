"""Keeping the catalog of upstream tools, resources and prompts in step with what each server lists."""

import logging
import time
from dataclasses import dataclass, field

from asgiref.sync import async_to_sync
from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

from approvals.audit import chain
from approvals.audit.chain import SYSTEM
from approvals.catalog import surface_sync
from approvals.catalog.change_detection import apply_entry, remove_entry
from approvals.catalog.models import Server, Tool
from approvals.catalog.specs import upstream_spec
from approvals.catalog.trust import exposed_name_for, reviewed_status
from approvals.db.after_commit import enqueue
from approvals.live import events
from approvals.protocol import permission_prompt
from approvals.protocol.tools import check_tool, tool_digest
from approvals.upstream import AuthorizationRequired, ServerIdentity, ServerSpec, UpstreamError, open_session
from approvals.upstream.serving import decline
from approvals.upstream_oauth import server_tokens
from approvals.upstream_oauth.connections import lister
from approvals.webhooks import announce

log = logging.getLogger(__name__)

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
    surface: dict = field(default_factory=dict)  # resources, templates and prompts changed, by kind (see surface_sync)

    def lists(self) -> dict[str, list]:
        """The report's lists of tools by the word a change is filed under."""
        words = ("added", "changed", "removed", "rejected", "review")
        return {word: getattr(self, word) for word in words}

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
    """The server's identity, its tools, and its other listings by kind (see surface_sync.fetch_surface)."""
    # Declaring what calls' sessions declare: some servers list the tools that elicit only to clients that can answer.
    async with open_session(spec, on_request=decline) as session:
        return session.identity, await session.list_tools(), await surface_sync.fetch_surface(session)


def sync_server(server: Server) -> SyncReport:
    """Fetch a server's tools and apply them to the catalog; failures are recorded on the server."""
    # Marked under way in the cache every process shares, so that a list change waits for it (sync_when_due).
    cache.set(running_key(server.pk), True, RUNNING_MARK_SECONDS)
    try:
        identity, definitions, listings = async_to_sync(fetch_catalog)(upstream_spec(server, lister(server)))
    except AuthorizationRequired as exc:
        server_tokens.challenged(server, exc.challenge, exc.message)
        server.refresh_from_db(fields=["health", "last_error", "oauth"])
        return SyncReport(server.name, ok=False, error=exc.message)
    except UpstreamError as exc:
        record_failure(server, exc.message)
        return SyncReport(server.name, ok=False, error=exc.message)
    finally:
        cache.delete(running_key(server.pk))
    return apply_catalog(server, identity, definitions, listings)


# How long a sync's mark outlives a process that died during it.
RUNNING_MARK_SECONDS = 600


def running_key(server_pk) -> str:
    return f"sync-running:{server_pk}"


def enqueue_sync(server: Server):
    """Sync the server in a celery task, once the transaction that asked for it commits."""
    enqueue("approvals.tasks.sync_server", server.pk)


def sync_when_due(server: Server) -> float:
    """The sync a list change asks for: enqueued unless one is under way or another began within
    SYNC_MIN_SECONDS. 0 when enqueued, else the seconds after which to ask again.

    A server announcing changes as fast as it likes costs one sync a window, in any number of
    processes (the window is an atomic add to the shared cache), and a change announced within a
    window is covered by the sync that opens the next one, which starts after it.
    """
    shortest = settings.SYNC_MIN_SECONDS
    if cache.get(running_key(server.pk)):
        return max(shortest, 1.0)
    now = time.time()
    if shortest <= 0 or cache.add(f"sync-window:{server.pk}", now + shortest, shortest):
        enqueue_sync(server)
        return 0.0
    return max((cache.get(f"sync-window:{server.pk}") or now) - now, 0.05)


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
            remove_entry(tool, now, report.lists())
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
    report.surface = surface_sync.apply_surface(server, identity.capabilities, listings or {}, now)
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
        surface_review = {label: changes.get("review", []) for label, changes in report.surface.items()}
        announce.entries_need_review(server, report.review, surface_review)
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


def apply_tool(server, tool, definition, exposed, status, reason, warnings, now, report):
    listed = {"definition": definition, "digest": tool_digest(definition), "status": status, "reason": reason}
    kept = {"upstream_name": definition["name"], "exposed_name": exposed, "warnings": warnings}
    apply_entry(server, Tool, tool, listed, kept, now, report.lists())


def test_connection(server: Server) -> tuple[ServerIdentity | None, int, str]:
    """Connect and list tools without changing the catalog: (identity, tool count, error)."""
    try:
        identity, definitions, _listings = async_to_sync(fetch_catalog)(upstream_spec(server, lister(server)))
    except UpstreamError as exc:
        return None, 0, exc.message
    return identity, len(definitions), ""
