"""The guard in front of /mcp as an ASGI application, driven message by message: what it answers a client that
leaves while its oversized body is still coming."""

import asyncio

import pytest

from approvals.gateway.guard import McpEndpointGuard


async def nothing_behind(*args):
    raise AssertionError("the guard let the request through")


def guarded(scope_headers: list[tuple[bytes, bytes]], messages: list[dict]) -> list[dict]:
    """What the guard sent for a POST /mcp with `scope_headers` whose receive gives `messages` in turn."""
    scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": [(b"host", b"127.0.0.1"), *scope_headers]}
    coming, sent = iter(messages), []

    async def receive():
        return next(coming)

    async def send(message):
        sent.append(message)

    asyncio.run(McpEndpointGuard(nothing_behind, nothing_behind)(scope, receive, send))
    return sent


@pytest.mark.parametrize(
    "headers",
    [[(b"content-length", b"3000")], [(b"transfer-encoding", b"chunked")]],
    ids=["declared", "chunked"],
)
def test_it_answers_nothing_to_a_client_that_leaves_while_its_oversized_body_comes(settings, headers):
    settings.MCP_MAX_BODY_BYTES = 1000
    messages = [
        {"type": "http.request", "body": b"x" * 1500, "more_body": True},
        {"type": "http.disconnect"},
    ]

    assert guarded(headers, messages) == []


def test_it_answers_413_once_an_oversized_body_has_come_whole(settings):
    settings.MCP_MAX_BODY_BYTES = 1000
    messages = [
        {"type": "http.request", "body": b"x" * 1500, "more_body": True},
        {"type": "http.request", "body": b"x" * 1500, "more_body": False},
    ]

    sent = guarded([(b"content-length", b"3000")], messages)

    assert sent[0]["status"] == 413
    assert (b"connection", b"close") not in sent[0]["headers"]
