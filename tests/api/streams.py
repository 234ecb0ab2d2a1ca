"""Reading `GET /api/v1/events` as a bot does, and calls for it to hear of."""

import asyncio
import json

import httpx

from approvals.calls import lifecycle
from approvals.calls.models import Call
from approvals.catalog.models import Tool
from approvals.protocol import revisions
from approvals.tokens.context import ClientContext
from approvals.tokens.credentials import create_token
from tests.api.conftest import bearer

TIMEOUT = 10


class Events:
    """One open stream, read an event at a time."""

    def __init__(self, response: httpx.Response):
        self.response, self.lines = response, response.aiter_lines()

    async def close(self):
        await self.response.aclose()

    async def next(self, comments=False) -> dict:
        """The next event ({"id", "event", "data"}), or with `comments` a comment line as {"comment": …}."""
        event: dict = {}
        while True:
            line = await asyncio.wait_for(anext(self.lines), TIMEOUT)
            if line.startswith(":") and comments:
                return {"comment": line[1:].strip()}
            if line == "" and "event" in event:
                return event
            name, _, value = line.partition(": ")
            if name == "data":
                event["data"] = json.loads(value)
            elif name in ("id", "event"):
                event[name] = value


def receive(tool: Tool, amount: int) -> Call:
    ctx = ClientContext(create_token(f"agent {amount}")[0], revisions.MODERN, "2026-07-28")
    return lifecycle.receive_call(ctx, tool, {"order_id": 1, "amount": amount}, 1, None)[0]


async def opened(http: httpx.AsyncClient, secret: str, after: str | None = None) -> Events:
    headers = bearer(secret) | ({"Last-Event-ID": after} if after else {})
    response = await http.send(http.build_request("GET", "/api/v1/events", headers=headers), stream=True)
    assert response.status_code == 200 and response.headers["content-type"] == "text/event-stream"
    events = Events(response)
    assert await asyncio.wait_for(anext(events.lines), TIMEOUT) == "retry: 2000"
    return events
