"""The upstream server behind the console when the MCP conformance suite runs against it.

    python tests/servers/conformance_upstream.py    # stdio, as the console spawns it

Each tool is one the suite's server scenarios (tools-call-*) call by name, and
answers what that scenario checks for. Built with the official SDK, so that a
failing scenario points at the console, not at a home-made server.
"""

import asyncio

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import AudioContent, CallToolResult, EmbeddedResource, ImageContent, TextContent, TextResourceContents

# A 1x1 PNG and a WAV header with two bytes of silence: the smallest valid samples.
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
WAV = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
# The suite waits for notifications sent apart in time, not in one burst.
STEP_SECONDS = 0.05

server = MCPServer("conformance-upstream", version="1.0.0")


def image() -> ImageContent:
    return ImageContent(type="image", data=PNG, mime_type="image/png")


def embedded(uri: str, mime_type: str, text: str) -> EmbeddedResource:
    return EmbeddedResource(type="resource", resource=TextResourceContents(uri=uri, mime_type=mime_type, text=text))


@server.tool(structured_output=False)
def test_simple_text() -> str:
    """Answers with one text block."""
    return "This is a simple text response for testing."


@server.tool(structured_output=False)
def test_image_content() -> list[ImageContent]:
    """Answers with one PNG image block."""
    return [image()]


@server.tool(structured_output=False)
def test_audio_content() -> list[AudioContent]:
    """Answers with one WAV audio block."""
    return [AudioContent(type="audio", data=WAV, mime_type="audio/wav")]


@server.tool(structured_output=False)
def test_embedded_resource() -> list[EmbeddedResource]:
    """Answers with one embedded text resource."""
    return [embedded("test://embedded-resource", "text/plain", "This is an embedded resource content.")]


@server.tool(structured_output=False)
def test_multiple_content_types() -> list[TextContent | ImageContent | EmbeddedResource]:
    """Answers with a text, an image and an embedded resource block."""
    return [
        TextContent(type="text", text="Multiple content types test:"),
        image(),
        embedded("test://mixed-content-resource", "application/json", '{"test":"data","value":123}'),
    ]


@server.tool(structured_output=False)
async def test_tool_with_logging(ctx: Context) -> str:
    """Sends three info log messages while it runs."""
    for step, text in enumerate(("Tool execution started", "Tool processing data", "Tool execution completed")):
        if step:
            await asyncio.sleep(STEP_SECONDS)
        await ctx.log("info", text)
    return "Tool with logging executed successfully"


@server.tool(structured_output=False)
async def test_tool_with_progress(ctx: Context) -> str:
    """Reports progress 0, 50 and 100 of 100 while it runs, to a caller that sent a progressToken."""
    for step, done in enumerate((0, 50, 100)):
        if step:
            await asyncio.sleep(STEP_SECONDS)
        await ctx.report_progress(done, 100, f"Completed step {done} of 100")
    return "Tool with progress executed successfully"


@server.tool()
def test_error_handling() -> CallToolResult:
    """Always fails, as a tool execution error (isError) rather than a protocol error."""
    text = "This tool intentionally returns an error for testing"
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


if __name__ == "__main__":
    server.run("stdio")
