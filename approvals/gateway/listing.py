"""tools/list: the active tools a token may use, in exposed-name order, a page at a time."""

from django.conf import settings
from django.core import signing

from approvals.audit import chain
from approvals.audit.chain import Actor
from approvals.models import ClientToken, Tool
from approvals.protocol.jsonrpc import INVALID_PARAMS, JsonRpcError
from approvals.tokens.credentials import token_allows

CURSOR_SALT = "approvals.gateway.tools-list-cursor"


def exposed_definition(tool: Tool) -> dict:
    """The upstream definition as clients see it: everything intact but the name."""
    return {**tool.definition, "name": tool.exposed_name}


def cursor_after(name: str) -> str:
    # Signed so that a client cannot page through names it could only guess at; the page starts after `name`.
    return signing.dumps(name, salt=CURSOR_SALT)


def read_cursor(cursor) -> str:
    if not isinstance(cursor, str):
        raise JsonRpcError(INVALID_PARAMS, "Invalid cursor: it must be a string from a previous tools/list")
    try:
        after = signing.loads(cursor, salt=CURSOR_SALT)
    except signing.BadSignature:
        after = None
    if not isinstance(after, str):
        raise JsonRpcError(INVALID_PARAMS, "Invalid cursor: it did not come from this server's tools/list")
    return after


def tools_page(token: ClientToken, params: dict, era: str) -> dict:
    """One page of the token's tools: {tools, nextCursor?}. Records a tools.listed event."""
    cursor = params.get("cursor")
    after = read_cursor(cursor) if cursor is not None else ""
    size = settings.MCP_TOOLS_PAGE_SIZE
    candidates = (
        Tool.objects.filter(status=Tool.Status.ACTIVE, server__enabled=True, exposed_name__gt=after)
        .order_by("exposed_name")
        .only("exposed_name", "definition")
    )
    page, more = [], False
    # Token scopes are shell-style globs, which SQL cannot match: filter while reading, stop one past the page.
    for tool in candidates.iterator():
        if not token_allows(token, tool.exposed_name):
            continue
        if len(page) == size:
            more = True
            break
        page.append(tool)
    result = {"tools": [exposed_definition(tool) for tool in page]}
    if more:
        result["nextCursor"] = cursor_after(page[-1].exposed_name)
    names = [tool.exposed_name for tool in page]
    chain.record(
        "tools.listed", Actor.client(token), token=token, data={"era": era, "count": len(names), "tools": names}
    )
    return result
