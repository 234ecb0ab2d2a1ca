"""The console's client toward upstream MCP servers: Streamable HTTP or stdio, both protocol eras.

Pure asyncio, with aiohttp for Streamable HTTP and httpx for OAuth; no Django import belongs here.

    async with open_session(spec, on_request=..., on_notification=...) as session:
        session.identity                      # revision and era to remember in spec.revision
        tools = await session.list_tools()
        result = await session.call_tool(name, arguments, tool=tools[0], progress_token=token)

Handlers: `on_request(method, params)` answers what a server asks for (a legacy
server-to-client request, or a 2026-07-28 input_required entry) with a result
dict, or raises JsonRpcError; given one, the session declares the elicitation
and sampling capabilities, and without one it declines. call_tool also takes
`on_request`, used for what belongs to that call. On legacy stdio nothing on the
wire ties a server's request to a call, so those go to the session's handler.

Every failure is an UpstreamError; `retryable` marks the ones worth trying again
(timeouts, unreachable servers, dead children, HTTP 5xx). Handlers themselves are
not timed: the console bounds its own waits for operators.
"""

from .errors import AuthorizationRequired, UpstreamError
from .pool import SessionPool
from .session import UpstreamSession, open_session
from .spec import ServerIdentity, ServerSpec

__all__ = [
    "AuthorizationRequired",
    "ServerIdentity",
    "ServerSpec",
    "SessionPool",
    "UpstreamError",
    "UpstreamSession",
    "open_session",
]
