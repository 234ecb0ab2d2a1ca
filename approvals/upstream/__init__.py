"""The console's client toward upstream MCP servers: Streamable HTTP or stdio, both protocol eras.

Pure asyncio and httpx; no Django import belongs here.
"""

from .errors import UpstreamError
from .pool import SessionPool
from .session import UpstreamSession, open_session
from .spec import ServerIdentity, ServerSpec

__all__ = ["ServerIdentity", "ServerSpec", "SessionPool", "UpstreamError", "UpstreamSession", "open_session"]
