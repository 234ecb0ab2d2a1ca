"""The list methods: what a token may use of the enabled servers, in a stable order, a page at a time.

tools/list, resources/list, resources/templates/list and prompts/list share one
way of paging: rows in the order of their route (the exposed name, the URI or
the URI template, each unique among active rows), and a signed cursor naming
the last route of the page.
"""

import heapq
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.core import signing
from django.db.models import QuerySet

from approvals.audit import chain
from approvals.audit.chain import Actor
from approvals.calls.permissions import BUILTIN_TOOLS, BuiltinTool
from approvals.catalog.models import Tool
from approvals.catalog.surface_models import Prompt, Resource, ResourceTemplate, SurfaceItem
from approvals.protocol.jsonrpc import INVALID_PARAMS, JsonRpcError
from approvals.tokens.credentials import token_allows
from approvals.tokens.models import ClientToken

CURSOR_SALT = "approvals.gateway.list-cursor"


def exposed_definition(row: Tool | SurfaceItem | BuiltinTool) -> dict:
    """The upstream definition as clients see it: everything intact but the name (a URI stays as given)."""
    definition = row.served_definition if isinstance(row, SurfaceItem) else row.definition
    if isinstance(row, Tool):
        definition = with_task_support(definition)
    return {**definition, "name": row.exposed_name}


def with_task_support(definition: dict) -> dict:
    """A tool's definition saying a client may run it as a task: the console can hold any call as one (calls.tasks).

    A tool its server runs only as a task keeps saying so.
    """
    execution = definition.get("execution") if isinstance(definition.get("execution"), dict) else {}
    if execution.get("taskSupport") == "required":
        return definition
    return {**definition, "execution": {**execution, "taskSupport": "optional"}}


@dataclass(frozen=True)
class Listing:
    method: str
    key: str  # the result's list
    route: str  # the field rows are ordered and paged by
    audit_action: str
    rows: Callable[[], QuerySet]
    columns: tuple = ("exposed_name", "definition")  # what exposed_definition reads


def active(model) -> Callable[[], QuerySet]:
    return lambda: model.objects.filter(status=model.Status.ACTIVE, server__enabled=True)


def served(model) -> Callable[[], QuerySet]:
    return lambda: model.objects.filter(SurfaceItem.SERVED, server__enabled=True)


SERVED_COLUMNS = ("exposed_name", "definition", "status", "reviewed_definition")
TOOLS = Listing("tools/list", "tools", "exposed_name", "tools.listed", active(Tool))
RESOURCES = Listing("resources/list", "resources", "uri", "resources.listed", served(Resource), SERVED_COLUMNS)
TEMPLATES = Listing(
    "resources/templates/list",
    "resourceTemplates",
    "uri",
    "templates.listed",
    served(ResourceTemplate),
    SERVED_COLUMNS,
)
PROMPTS = Listing("prompts/list", "prompts", "exposed_name", "prompts.listed", served(Prompt), SERVED_COLUMNS)
LISTINGS = {listing.method: listing for listing in (TOOLS, RESOURCES, TEMPLATES, PROMPTS)}


def cursor_after(listing: Listing, route: str) -> str:
    # Signed so that a client cannot page through routes it could only guess at; the page starts after `route`.
    return signing.dumps(route, salt=f"{CURSOR_SALT}:{listing.method}")


def read_cursor(listing: Listing, cursor) -> str:
    if not isinstance(cursor, str):
        raise JsonRpcError(INVALID_PARAMS, f"Invalid cursor: it must be a string from a previous {listing.method}")
    try:
        after = signing.loads(cursor, salt=f"{CURSOR_SALT}:{listing.method}")
    except signing.BadSignature:
        after = None
    if not isinstance(after, str):
        raise JsonRpcError(INVALID_PARAMS, f"Invalid cursor: it did not come from this server's {listing.method}")
    return after


def page(listing: Listing, token: ClientToken, params: dict, era: str) -> dict:
    """One page of what the token may use: {<key>: [...], nextCursor?}. Records the listing in the audit log."""
    cursor = params.get("cursor")
    after = read_cursor(listing, cursor) if cursor is not None else ""
    size = settings.MCP_TOOLS_PAGE_SIZE
    candidates = (
        listing.rows()
        .filter(**{f"{listing.route}__gt": after})
        .order_by(listing.route)
        .only(listing.route, *listing.columns)
    )
    if listing is TOOLS:
        # The console's own tools take their place in the order of names, so paging treats them alike.
        own = [tool for name, tool in sorted(BUILTIN_TOOLS.items()) if name > after]
        candidates = heapq.merge(candidates.iterator(), own, key=lambda row: row.exposed_name)
    else:
        candidates = candidates.iterator()
    rows, more = [], False
    # Token scopes are shell-style globs, which SQL cannot match: filter while reading, stop one past the page.
    for row in candidates:
        if not token_allows(token, row.exposed_name):
            continue
        if len(rows) == size:
            more = True
            break
        rows.append(row)
    result = {listing.key: [exposed_definition(row) for row in rows]}
    if more:
        result["nextCursor"] = cursor_after(listing, getattr(rows[-1], listing.route))
    routes = [getattr(row, listing.route) for row in rows]
    chain.record(
        listing.audit_action,
        Actor.client(token),
        token=token,
        data={"era": era, "count": len(routes), listing.key: routes},
    )
    return result


def tools_page(token: ClientToken, params: dict, era: str) -> dict:
    return page(TOOLS, token, params, era)
