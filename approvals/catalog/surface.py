"""A server's resources, resource templates and prompts in the catalog, and the table that routes to them.

Kept at each sync beside the tools. A resource is reached by its URI, kept as the
server gives it; a template by the URIs it matches; a prompt by its exposed name
(the server's prefix and its name). Two active rows of one kind may never share
their route: the row that holds it first keeps it, and a later one is rejected
with the reason, as tool names are (also in the database's constraints).
"""

from collections import defaultdict
from dataclasses import dataclass

from approvals.catalog.models import Prompt, Resource, ResourceTemplate, Server, SurfaceItem
from approvals.catalog.trust import apply_entry, remove_entry, reviewed_status
from approvals.protocol.canonical import sha256_digest
from approvals.protocol.jsonrpc import METHOD_NOT_FOUND
from approvals.protocol.uri_templates import template_errors
from approvals.upstream import UpstreamError, UpstreamSession

# PostgreSQL indexes a value of at most some 2,700 bytes; the routes are indexed.
MAX_URI_BYTES = 2000


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


RESOURCES = Kind(Resource, "resources", "resources", "uri", "uri", MAX_URI_BYTES, "Resources", "resource")
TEMPLATES = Kind(
    ResourceTemplate,
    "resource_templates",
    "resources",
    "uriTemplate",
    "uri",
    MAX_URI_BYTES,
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


def route_of(kind: Kind, definition: dict, exposed: str) -> str:
    return exposed if kind is PROMPTS else definition[kind.key]


def apply_kind(server: Server, kind: Kind, definitions: list[dict], exposed_name_for, now) -> dict[str, list]:
    """Apply one listing of one kind to the catalog; `exposed_name_for(prefix, name)` is the tools' naming rule.

    Returns the routes (URI, template or exposed name) it added, changed, removed and rejected, by those words.
    """
    changes = defaultdict(list)
    model, routed_by = kind.model, kind.model.ROUTED_BY
    existing = {getattr(row, kind.stored_in): row for row in kind.model.objects.filter(server=server)}
    taken = dict(
        model.objects.filter(status__in=SurfaceItem.HELD).exclude(server=server).values_list(routed_by, "server__name")
    )
    seen, held_here = set(), {}
    for definition in definitions:
        definition = definition if isinstance(definition, dict) else {}
        name, identity = definition.get("name"), definition.get(kind.key)
        problem = identity_problem(kind, identity, seen)
        if problem:
            changes["rejected"].append(problem)
            continue
        seen.add(identity)
        reason = "; ".join(definition_errors(kind, definition))
        exposed, naming = exposed_name_for(server.tool_prefix, name) if isinstance(name, str) else ("", "")
        if kind is PROMPTS and not reason:
            reason = naming
        route = route_of(kind, definition, exposed)
        if not reason and route in taken:
            reason = f"{route_noun(kind)} {route!r} is already served by the server {taken[route]}"
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
    listed = {"definition": definition, "digest": digest, "status": status, "reason": reason}
    kept = {"upstream_name": str(definition.get("name") or "")[:200], "exposed_name": exposed[:300]}
    kept[kind.stored_in] = identity
    apply_entry(server, kind.model, row, listed, kept, now, changes)


def apply_surface(server: Server, capabilities: dict, listings: dict, exposed_name_for, now) -> dict:
    """Apply every kind's listing (`listings` by label; a kind the server does not offer is emptied)."""
    changed = {}
    for kind in KINDS:
        definitions = listings.get(kind.label, []) if offers(capabilities, kind) else []
        changes = apply_kind(server, kind, definitions, exposed_name_for, now)
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
