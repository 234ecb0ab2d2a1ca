"""The MCP endpoint's outer guard, in front of Django: foreign Host or Origin (403) and oversized bodies (413).

It runs before Django so that a refusal is in the protocol's terms: Django would
answer a foreign Host with its own 400 page, and would read a whole body first.
It also splits the traffic: the endpoint goes to its own Django handler, every
other path to the pages'.
"""

from collections import deque
from urllib.parse import urlsplit

from django.conf import settings
from django.http.request import split_domain_port, validate_host

from approvals.protocol import jsonrpc
from approvals.protocol.jsonrpc import INVALID_REQUEST, JsonRpcError

MCP_PATH = "/mcp"


def allowed_hosts() -> list[str]:
    # Django's own rule: with DEBUG and no ALLOWED_HOSTS, local names are allowed.
    if settings.DEBUG and not settings.ALLOWED_HOSTS:
        return [".localhost", "127.0.0.1", "[::1]"]
    return settings.ALLOWED_HOSTS


def is_allowed_host(host: str) -> bool:
    domain, _port = split_domain_port(host)
    return bool(domain) and validate_host(domain, allowed_hosts())


def header(scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key.lower() == name:
            return value.decode("latin-1")
    return None


def foreign_origin_problem(scope) -> str:
    """Why the request's Host or Origin is not this console's (DNS rebinding), or '' when both are."""
    host = header(scope, b"host")
    if host is None and scope.get("server"):
        host = "{}:{}".format(*scope["server"])
    if not host or not is_allowed_host(host):
        return "Forbidden: the Host header names no host this console serves"
    origin = header(scope, b"origin")
    # A request without Origin comes from no browser page, so no page can have rebound a name to us.
    if origin is not None and not is_allowed_host(urlsplit(origin).netloc):
        return "Forbidden: requests from this Origin are not allowed"
    return ""


def declared_length(scope) -> int | None:
    value = header(scope, b"content-length")
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


async def refuse(send, status: int, message: str):
    body = jsonrpc.encode(jsonrpc.error(None, JsonRpcError(INVALID_REQUEST, message)))
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
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


class McpEndpointGuard:
    def __init__(self, endpoint, pages):
        self.endpoint, self.pages = endpoint, pages

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["path"].removeprefix(scope.get("root_path", "")) != MCP_PATH:
            return await self.pages(scope, receive, send)
        problem = foreign_origin_problem(scope)
        if problem:
            return await refuse(send, 403, problem)
        limit = settings.MCP_MAX_BODY_BYTES
        too_large = f"Request body too large: at most {limit} bytes"
        length = declared_length(scope)
        if length is not None and length > limit:
            return await refuse(send, 413, too_large)
        # A chunked body announces no length: count it as it comes, and replay what was read to Django.
        messages = await read_bounded(receive, limit)
        if messages is None:
            return await refuse(send, 413, too_large)
        pending = deque(messages)

        async def replay():
            return pending.popleft() if pending else await receive()

        return await self.endpoint(scope, replay, send)
