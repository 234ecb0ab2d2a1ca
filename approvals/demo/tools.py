"""The demo tools as one list: how each is described to a given revision, and how a call runs."""

import base64

from approvals.demo import records, refunds, reports
from approvals.demo.toolkit import CallContext, InputUnavailable, Tool, error, schema_problems
from approvals.protocol.jsonrpc import INVALID_PARAMS, JsonRpcError
from approvals.protocol.revisions import REVISIONS, Revision

# Small on purpose, so that every client of the demo walks more than one page.
PAGE_SIZE = 5
TOOLS: list[Tool] = [*records.TOOLS, refunds.issue_refund, *reports.TOOLS]
BY_NAME = {tool.name: tool for tool in TOOLS}


def definition(tool: Tool, revision: Revision) -> dict:
    """The tool as `tools/list` shows it to a client of `revision`, leaving out fields it predates."""
    described = {
        "name": tool.name,
        "title": tool.title,
        "description": tool.description,
        "inputSchema": tool.input_schema,
        # annotations.title is where 2025-03-26 clients, which predate the top-level title, look for one.
        "annotations": {"title": tool.title, **tool.annotations},
    }
    if tool.output_schema and revision.structured_output:
        described["outputSchema"] = tool.output_schema
    if tool.icon and revision.icons:
        described["icons"] = [{"src": tool.icon, "mimeType": "image/png", "sizes": ["24x24"]}]
    return described


def _cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(f"tools:{offset}".encode()).decode("ascii")


def _offset(cursor: str) -> int:
    try:
        kind, _, offset = base64.urlsafe_b64decode(cursor.encode("ascii")).decode().partition(":")
        if kind == "tools" and offset.isdigit() and 0 < int(offset) < len(TOOLS):
            return int(offset)
    except ValueError:
        pass
    raise JsonRpcError(INVALID_PARAMS, "Invalid cursor: list the tools again from the first page")


def page(cursor: str | None, revision: Revision) -> tuple[list[dict], str | None]:
    """One page of definitions, and the cursor of the next page when there is one."""
    start = 0 if cursor is None else _offset(cursor)
    end = start + PAGE_SIZE
    shown = [definition(tool, revision) for tool in TOOLS[start:end]]
    return shown, _cursor(end) if end < len(TOOLS) else None


async def call(tool: Tool, ctx: CallContext, arguments: dict) -> dict:
    """Validate the arguments, run the tool, and shape its result for the call's revision.

    Raises InputRequired (from the tool) when a 2026-07-28 call must come back with answers.
    """
    problems = schema_problems(tool.input_schema, arguments)
    if problems:
        return error(f"Invalid arguments for {tool.name}: {'; '.join(problems)}. Correct them and call the tool again.")
    defaults = {name: prop["default"] for name, prop in tool.input_schema["properties"].items() if "default" in prop}
    try:
        result = await tool.handler(ctx, {**defaults, **arguments})
    except InputUnavailable as exc:
        # Tools ask for input before they change anything, so a failed ask leaves everything as it was.
        return error(f"{tool.name} did not run: {exc}. Nothing was changed.")
    if not REVISIONS[ctx.version].structured_output:
        result.pop("structuredContent", None)
    return result
