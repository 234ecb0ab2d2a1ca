"""An upstream MCP server built with the official Python SDK, for the upstream client's tests.

    python tests/servers/sdk_server.py PORT    # Streamable HTTP at http://127.0.0.1:PORT/mcp
    python tests/servers/sdk_server.py stdio

It speaks 2026-07-28 and, to clients that ask for it, the legacy revisions.
"""

import sys
from typing import Annotated

from mcp.server.elicitation import AcceptedElicitation, ElicitationResult
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.resolve import Elicit, Resolve
from mcp.server.streamable_http import EventStore
from mcp_types import ToolAnnotations
from pydantic import BaseModel, Field

server = MCPServer("sdk-test-server", version="1.0.0", instructions="A server for the console's upstream tests.")


@server.tool(title="Echo", annotations=ToolAnnotations(readOnlyHint=True, openWorldHint=False), structured_output=False)
def echo(message: str) -> str:
    """Echoes the message back."""
    return message


class Weather(BaseModel):
    city: str
    temperature: float = Field(description="Degrees Celsius")
    conditions: str


@server.tool()
def weather(city: str) -> Weather:
    """The weather in a city, as structured content."""
    return Weather(city=city, temperature=21.5, conditions="sunny")


@server.tool(structured_output=False)
def regional_lookup(
    region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})],
    query: str,
    ctx: Context,
) -> str:
    """Looks a query up in a region; tells which Mcp-Param-Region header it received."""
    return f"{query} in {region}; header: {(ctx.headers or {}).get('mcp-param-region')}"


class Confirmation(BaseModel):
    confirm: bool


def ask_confirmation(target: str) -> Elicit[Confirmation]:
    return Elicit(f"Really delete {target}?", Confirmation)


@server.tool(structured_output=False)
def delete_record(target: str, answer: Annotated[ElicitationResult[Confirmation], Resolve(ask_confirmation)]) -> str:
    """Deletes a record once a person confirms."""
    if isinstance(answer, AcceptedElicitation) and answer.data.confirm:
        return f"deleted {target}"
    return f"kept {target} ({answer.action})"


@server.tool(structured_output=False)
async def slow_count(steps: int, ctx: Context) -> str:
    """Counts with progress, closing its event stream halfway so the client must resume it."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps)
        if step == steps // 2:
            await ctx.close_sse_stream()
    return f"counted to {steps}"


class MemoryEventStore(EventStore):
    """Keeps every event, so a client that lost a stream can resume it with Last-Event-ID."""

    def __init__(self):
        self.events = []  # (event id, stream id, message)

    async def store_event(self, stream_id, message):
        event_id = str(len(self.events) + 1)
        self.events.append((event_id, stream_id, message))
        return event_id

    async def replay_events_after(self, last_event_id, send_callback):
        from mcp.server.streamable_http import EventMessage

        stream = next((s for e, s, _ in self.events if e == last_event_id), None)
        if stream is None:
            return None
        after = False
        for event_id, stream_id, message in self.events:
            if after and stream_id == stream and message is not None:
                await send_callback(EventMessage(message, event_id))
            after = after or event_id == last_event_id
        return stream


if __name__ == "__main__":
    if sys.argv[1] == "stdio":
        server.run("stdio")
    else:
        import anyio

        anyio.run(
            lambda: server.run_streamable_http_async(
                port=int(sys.argv[1]), event_store=MemoryEventStore(), retry_interval=100
            )
        )
