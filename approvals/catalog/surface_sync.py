"""A server's resources, resource templates and prompts in the catalog, and the table that routes to them.

Kept at each sync beside the tools. A resource is reached by its URI, kept in
RFC 3986's normal form (protocol.uris) as clients' URIs are before they are routed;
a template by the URIs it matches; a prompt by its exposed name (the server's prefix
and its name). Two active rows of one kind may never share their route, and no
server's URI or template may reach what another's does (a template matching another
server's resource, or overlapping its template): the row that holds it first keeps
it, and a later one is rejected with the reason naming the overlap, as tool names are.
"""

from collections import defaultdict
from dataclasses import dataclass

from approvals.catalog.change_detection import apply_entry, remove_entry
from approvals.catalog.models import Server
from approvals.catalog.surface_models import Prompt, Resource, ResourceTemplate, SurfaceItem
from approvals.catalog.trust import exposed_name_for, reviewed_status
from approvals.protocol.canonical import sha256_digest
from approvals.protocol.jsonrpc import METHOD_NOT_FOUND
from approvals.protocol.uri_templates import matches, overlaps, template_errors
from approvals.protocol.uris import normalized
from approvals.upstream import UpstreamError, UpstreamSession

# PostgreSQL indexes a value of at most some 2,700 bytes; the routes are indexed.
ROUTE_MAX_BYTES = 2000


@dataclass(frozen=True)
class Kind:
    """One kind of listing: its model, the capability that offers it, and the definition's key that routes it."""

    model: type[SurfaceItem]
    label: str  # as the catalog.changed event and the sync summary name it
    capability: str
    key: str  # the definition's field that tells one entry of the server's from another
    stored_in: str  # the model's field that keeps it
    max_bytes: int  # of that key; a longer one cannot be kept (nor indexed), and is left out
    title: str  # as pages head the kind
    noun: str  # as pages name one of it


RESOURCES = Kind(Resource, "resources", "resources", "uri", "uri", ROUTE_MAX_BYTES, "Resources", "resource")
TEMPLATES = Kind(
    ResourceTemplate,
    "resource_templates",
    "resources",
    "uriTemplate",
    "uri",
    ROUTE_MAX_BYTES,
    "Resource templates",
    "resource template",
)
PROMPTS = Kind(Prompt, "prompts", "prompts", "name", "upstream_name", 200, "Prompts", "prompt")
KINDS = (RESOURCES, TEMPLATES, PROMPTS)
BY_LABEL = {kind.label: kind for kind in KINDS}


async def fetch_surface(session: UpstreamSession) -> dict[str, list[dict]]:
    """Each listing the server's capabilities offer, by kind label."""
    capabilities, listings = session.identity.capabilities, {}
    if offers(capabilities, RESOURCES):
        listings[RESOURCES.label] = await session.list_resources()
        try:
            listings[TEMPLATES.label] = await session.list_resource_templates()
        except UpstreamError as exc:
            # Templates are optional within the resources capability; some servers leave the method out.
            if exc.code != METHOD_NOT_FOUND:
                raise
    if offers(capabilities, PROMPTS):
        listings[PROMPTS.label] = await session.list_prompts()
    return listings


def offers(capabilities: dict, kind: Kind) -> bool:
    return isinstance(capabilities, dict) and isinstance(capabilities.get(kind.capability), dict)


def definition_errors(kind: Kind, definition: dict) -> list[str]:
    errors = []
    if not isinstance(definition.get("name"), str) or not definition["name"]:
        errors.append("it has no name")
    if kind is TEMPLATES:
        errors += template_errors(definition[kind.key])
    for key in ("title", "description", "mimeType"):
        if definition.get(key) is not None and not isinstance(definition[key], str):
            errors.append(f"its {key} is not a string")
    if kind is PROMPTS:
        errors += argument_errors(definition.get("arguments"))
    return errors


def argument_errors(arguments) -> list[str]:
    if arguments is None:
        return []
    if not isinstance(arguments, list):
        return ["its arguments are not a list"]
    errors, names = [], set()
    for index, argument in enumerate(arguments):
        name = argument.get("name") if isinstance(argument, dict) else None
        if not isinstance(name, str) or name in names:
            errors.append(f"its argument {index} has no name, or one used twice")
        elif argument.get("required") is not None and not isinstance(argument["required"], bool):
            errors.append(f"its argument {name!r} says 'required' in something other than true or false")
        names.add(name)
    return errors


def identity_problem(kind: Kind, identity, seen: set) -> str:
    """Why an entry cannot even be kept: it names nothing the next listing could be matched with."""
    if not isinstance(identity, str) or not identity:
        return f"an entry has no {kind.key} string"
    if len(identity.encode()) > kind.max_bytes:
        return f"{identity[:80]!r}... is longer than {kind.max_bytes} bytes"
    if identity in seen:
        return f"{identity!r} is listed twice"
    return ""


def route_noun(kind: Kind) -> str:
    return "exposed name" if kind is PROMPTS else kind.key


def held_elsewhere(model, server: Server) -> dict[str, str]:
    """The routes of a kind that other servers hold, with the name of the server holding each."""
    held = model.objects.filter(status__in=SurfaceItem.HELD).exclude(server=server)
    return dict(held.values_list(model.ROUTED_BY, "server__name"))


def overlap(kind: Kind, route: str, resources: dict[str, str], templates: dict[str, str]) -> str:
    """Why a URI or a template would reach what another server's does, naming the overlap; '' when it would not."""
    if kind is RESOURCES:
        found = next((t for t in templates if matches(t, route)), None)
        if found is not None:
            return f"uri {route!r} is matched by the resource template {found!r} of the server {templates[found]}"
    if kind is TEMPLATES:
        found = next((uri for uri in resources if matches(route, uri)), None)
        if found is not None:
            return f"uriTemplate {route!r} matches the resource {found!r} of the server {resources[found]}"
        found = next((t for t in templates if overlaps(route, t)), None)
        if found is not None:
            return f"uriTemplate {route!r} overlaps the resource template {found!r} of the server {templates[found]}"
    return ""


def identity_of(kind: Kind, definition: dict):
    # A resource's URI is its route, compared in normal form; a template's is matched as listed.
    identity = definition.get(kind.key)
    return normalized(identity) if kind is RESOURCES and isinstance(identity, str) else identity


def apply_kind(server: Server, kind: Kind, definitions: list[dict], now) -> dict[str, list]:
    """Apply one listing of one kind to the catalog.

    Returns the routes (URI, template or exposed name) it added, changed, removed and rejected, by those words.
    """
    changes = defaultdict(list)
    existing = {getattr(row, kind.stored_in): row for row in kind.model.objects.filter(server=server)}
    taken = held_elsewhere(kind.model, server)
    uri_kind = kind in (RESOURCES, TEMPLATES)
    resources = held_elsewhere(RESOURCES.model, server) if uri_kind else {}
    templates = held_elsewhere(TEMPLATES.model, server) if uri_kind else {}
    seen, held_here = set(), {}
    for definition in definitions:
        definition = definition if isinstance(definition, dict) else {}
        name, identity = definition.get("name"), identity_of(kind, definition)
        problem = identity_problem(kind, identity, seen)
        if problem:
            changes["rejected"].append(problem)
            continue
        seen.add(identity)
        reason = "; ".join(definition_errors(kind, definition))
        exposed, naming = exposed_name_for(server.tool_prefix, name) if isinstance(name, str) else ("", "")
        if kind is PROMPTS and not reason:
            reason = naming
        route = exposed if kind is PROMPTS else identity
        if not reason and route in taken:
            reason = f"{route_noun(kind)} {route!r} is already served by the server {taken[route]}"
        if not reason and uri_kind:
            reason = overlap(kind, route, resources, templates)
        if not reason and route in held_here:
            reason = f"{route_noun(kind)} {route!r} is already used by {held_here[route]!r} of this server"
        status = SurfaceItem.Status.REJECTED if reason else SurfaceItem.Status.ACTIVE
        if status == SurfaceItem.Status.ACTIVE:
            held_here[route] = identity
        store(server, kind, existing.pop(identity, None), definition, identity, exposed, status, reason, now, changes)
    for row in existing.values():
        if row.status != SurfaceItem.Status.REMOVED:
            remove_entry(row, now, changes)
    return dict(changes)


def store(server, kind, row, definition, identity, exposed, status, reason, now, changes):
    digest = sha256_digest(definition)
    if status == SurfaceItem.Status.ACTIVE:
        status = reviewed_status(server, row, digest)
    if status == SurfaceItem.Status.NEEDS_REVIEW and row is not None and row.reviewed_definition is not None:
        # Renamed upstream: clients reach it, and tokens' globs match it, by its accepted name until the rename is.
        exposed = exposed_name_for(server.tool_prefix, str(row.reviewed_definition.get("name") or ""))[0]
    listed = {"definition": definition, "digest": digest, "status": status, "reason": reason}
    kept = {"upstream_name": str(definition.get("name") or "")[:200], "exposed_name": exposed[:300]}
    kept[kind.stored_in] = identity
    apply_entry(server, kind.model, row, listed, kept, now, changes)


def apply_surface(server: Server, capabilities: dict, listings: dict, now) -> dict:
    """Apply every kind's listing (`listings` by label; a kind the server does not offer is emptied)."""
    changed = {}
    for kind in KINDS:
        definitions = listings.get(kind.label, []) if offers(capabilities, kind) else []
        changes = apply_kind(server, kind, definitions, now)
        if changes:
            changed[kind.label] = changes
    return changed


def listed_by_kind(server: Server) -> list[dict]:
    """The server's resources, templates and prompts as last listed, by kind; what it no longer lists is counted."""
    sections = []
    for kind in KINDS:
        rows = kind.model.objects.filter(server=server)
        listed = list(rows.exclude(status=SurfaceItem.Status.REMOVED))
        removed = rows.filter(status=SurfaceItem.Status.REMOVED).count()
        if listed or removed:
            sections.append({"title": kind.title, "kind": kind.label, "rows": listed, "removed": removed})
    return sections
