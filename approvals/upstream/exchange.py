"""What the session and its transports share: one request in flight, and how messages are read."""

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from approvals.protocol import jsonrpc

from .errors import UpstreamError

MAX_MESSAGE_BYTES = 16 * 1024 * 1024

OnRequest = Callable[[str, dict], Awaitable[dict]]
OnNotification = Callable[[str, dict], Awaitable[None]]


@dataclass(eq=False)
class Exchange:
    """A request of ours awaiting its answer, and whom to tell about messages that belong to it."""

    request_id: int
    method: str
    progress_token: Any = None  # the token we sent upstream
    caller_progress_token: Any = None  # the caller's, which its notifications are given back with
    on_request: OnRequest | None = None
    on_notification: OnNotification | None = None
    # Loop time of the last sign of progress: the wait for the answer runs from here.
    last_activity: float = field(default_factory=lambda: asyncio.get_running_loop().time())

    def touch(self) -> None:
        self.last_activity = asyncio.get_running_loop().time()


# Serves a request or notification from the server; returns the response message to send back, if any.
Serve = Callable[[jsonrpc.Message, Exchange | None], Awaitable[dict | None]]


def parse(data: bytes | str, server: str) -> jsonrpc.Message:
    """One message from upstream; U+0000 in it becomes U+FFFD, since the console could store none of it."""
    try:
        value = jsonrpc.decode(data)
        if ("u0000" in data if isinstance(data, str) else b"u0000" in data) and jsonrpc.has_nul(value):
            value = jsonrpc.without_nul(value)
        return jsonrpc.parse_message(value)
    except jsonrpc.JsonRpcError as exc:
        excerpt = data[:200].decode("utf-8", "replace") if isinstance(data, bytes) else data[:200]
        raise UpstreamError(f"{server}: sent a malformed message ({exc.message}): {excerpt!r}") from None
