"""An upstream MCP server, built with the official SDK, that serves resources, templates, prompts and completion.

    python tests/servers/surface_server.py PORT    # Streamable HTTP at http://127.0.0.1:PORT/mcp
    python tests/servers/surface_server.py stdio

It speaks 2026-07-28 and, to clients that ask for it, the legacy revisions. Its
resource listing comes in pages of PAGE_SIZE, so a client must follow nextCursor.
"""

import sys

from mcp.server.mcpserver import MCPServer
from mcp_types import Completion, ListResourcesResult, PromptReference, ResourceTemplateReference

PAGE_SIZE = 10
NOTES = 25
# Every byte value, so that a blob altered on the way (re-encoded, decoded as text) cannot go unnoticed.
LOGO = bytes(range(256))
LANGUAGES = ["perl", "php", "python", "rust"]
TOPICS = ["alpha", "beta", "gamma"]


class PagedServer(MCPServer):
    async def _handle_list_resources(self, ctx, params):
        everything = await self.list_resources()
        start = int(params.cursor) if params is not None and params.cursor else 0
        end = start + PAGE_SIZE
        return ListResourcesResult(
            resources=everything[start:end], next_cursor=str(end) if end < len(everything) else None
        )


server = PagedServer("surface-test-server", version="1.0.0")


@server.resource("docs://readme", name="readme", title="Read me", mime_type="text/plain")
def readme() -> str:
    """What this server is for."""
    return "A server of resources and prompts."


@server.resource("docs://logo.png", name="logo", mime_type="image/png")
def logo() -> bytes:
    """Binary contents."""
    return LOGO


@server.resource("file://docs/guide.md", name="guide", mime_type="text/markdown")
def guide() -> str:
    """A document under file://docs/, which a policy rule may let anyone read."""
    return "# Guide"


def add_note(number: int):
    @server.resource(f"notes://n/{number}", name=f"note-{number:02d}", mime_type="text/plain")
    def note() -> str:
        return f"note {number}"


for number in range(NOTES):
    add_note(number)


@server.resource("notes://by-topic/{topic}", name="notes-by-topic", mime_type="text/plain")
def notes_by_topic(topic: str) -> str:
    """The notes on one topic."""
    return f"notes about {topic}"


@server.prompt(title="Review code", description="Asks for a review of some code.")
def review_code(code: str, language: str = "python") -> str:
    return f"Please review this {language} code:\n{code}"


@server.prompt()
def greeting() -> str:
    """A greeting without arguments."""
    return "Hello!"


@server.completion()
async def complete(ref, argument, context):
    if isinstance(ref, PromptReference) and ref.name == "review_code" and argument.name == "language":
        return Completion(values=[v for v in LANGUAGES if v.startswith(argument.value)])
    if isinstance(ref, ResourceTemplateReference) and argument.name == "topic":
        return Completion(values=[v for v in TOPICS if v.startswith(argument.value)])
    return None


if __name__ == "__main__":
    if sys.argv[1] == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", port=int(sys.argv[1]))
