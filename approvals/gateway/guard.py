"""The MCP endpoint's outer guard, in front of everything: foreign Host or Origin (403) and oversized bodies (413).

It splits the traffic: /mcp goes to the endpoint's own ASGI application (gateway.application),
which never enters Django's request cycle, every other path to Django's pages. Its refusals are
in the protocol's terms: Django would answer a foreign Host with its own 400 page.
"""

from django.conf import settings

from approvals.gateway.origins import foreign_origin_problem, header
from approvals.protocol import jsonrpc
from approvals.protocol.jsonrpc import INVALID_REQUEST, JsonRpcError

MCP_PATH = "/mcp"
# A body over the limit is still read, and dropped, up to this many times the limit before the 413: a server that
# answers and closes the connection while the client still sends resets it, and the client gets the reset rather
# than the answer. Past that the connection is given up.
DRAINED_LIMITS = 4


def declared_length(scope) -> int | None:
    value = header(scope, b"content-length")
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


async def refuse(send, status: int, message: str, closing: bool = False):
    """`closing`: the request's body is left unread, so its connection cannot serve another."""
    body = jsonrpc.encode(jsonrpc.error(None, JsonRpcError(INVALID_REQUEST, message)))
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if closing:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def read_bounded(receive, limit: int) -> list[dict] | None:
    """The request's messages up to its last body chunk (or a disconnect); None once the body passes `limit`."""
    messages, size = [], 0
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            return messages
        size += len(message.get("body", b""))
        if size > limit:
            return None
        if not message.get("more_body", False):
            return messages


async def drained(receive, allowance: int) -> bool | None:
    """Reads and drops the rest of the request's body, as long as it stays within `allowance` bytes: True once it
    ended within them, False past them, None if the client left meanwhile."""
    while allowance >= 0:
        message = await receive()
        if message["type"] != "http.request":
            return None
        if not message.get("more_body", False):
            return True
        allowance -= len(message.get("body", b""))
    return False


async def refuse_too_large(send, limit: int, whole: bool | None):
    """413 for a body over `limit`: `whole` says whether the rest of it was read (drained), None that its client
    left meanwhile, and nobody is there to answer."""
    if whole is not None:
        await refuse(send, 413, f"Request body too large: at most {limit} bytes", closing=not whole)


class McpEndpointGuard:
    """`endpoint(scope, body, receive, send)` gets /mcp with its whole body read; `pages` is an ASGI application."""

    def __init__(self, endpoint, pages):
        self.endpoint, self.pages = endpoint, pages

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["path"].removeprefix(scope.get("root_path", "")) != MCP_PATH:
            return await self.pages(scope, receive, send)
        limit = settings.MCP_MAX_BODY_BYTES
        length = declared_length(scope)
        if length is not None and length > limit:
            return await refuse_too_large(
                send, limit, length <= DRAINED_LIMITS * limit and await drained(receive, length)
            )
        # The body is read before any other refusal, for the reason DRAINED_LIMITS gives. A chunked body announces
        # no length: it is counted as it comes.
        messages = await read_bounded(receive, limit)
        if messages is None:
            return await refuse_too_large(send, limit, await drained(receive, (DRAINED_LIMITS - 1) * limit))
        if messages[-1]["type"] != "http.request":
            # The client left before its body was whole: nobody is there to answer.
            return None
        problem = foreign_origin_problem(scope)
        if problem:
            return await refuse(send, 403, problem)
        return await self.endpoint(scope, b"".join(message.get("body", b"") for message in messages), receive, send)
