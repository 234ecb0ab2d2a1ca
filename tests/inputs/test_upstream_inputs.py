"""The upstream client's side of input requests: which call a stdio server's request belongs to,
and a round's requests together."""

import asyncio
import dataclasses
import sys

import pytest

from approvals.upstream import ServerSpec, open_session
from tests.fixtures.servers import SERVERS

FORMS = ServerSpec(
    name="forms", transport="stdio", command=(sys.executable, str(SERVERS / "forms_server.py")), timeout=20
)


async def test_it_asks_a_rounds_input_requests_side_by_side():
    arrived = []
    both = asyncio.Event()

    async def on_request(method, params):
        arrived.append(params["message"])
        if len(arrived) == 2:
            both.set()
        # Answered only once both questions are open: asking one after the other would never get here.
        await asyncio.wait_for(both.wait(), 5)
        return {"action": "accept", "content": {"pick": "yes" if "flight" in params["message"] else "no"}}

    async with open_session(FORMS, on_request=on_request) as session:
        assert session.identity.era == "modern"
        result = await session.call_tool("book_trip", {})
    assert sorted(arrived) == ["Book the flight?", "Book the hotel?"]
    assert result["content"][0]["text"] == "flight: yes, hotel: no"


@pytest.mark.parametrize("revision", ["2025-06-18", "2025-11-25"])
async def test_it_gives_a_legacy_stdio_servers_request_to_the_one_call_in_flight(revision):
    async def session_wide(method, params):
        return {"action": "decline"}

    async def this_call(method, params):
        return {"action": "accept", "content": {"pick": "yes"}}

    async with open_session(dataclasses.replace(FORMS, revision=revision), on_request=session_wide) as session:
        assert session.identity.era == "legacy"
        result = await session.call_tool("book_trip", {}, on_request=this_call)
    assert result["content"][0]["text"] == "flight: yes, hotel: yes"
