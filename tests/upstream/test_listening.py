"""A 2026-07-28 server's change notifications, heard through one subscriptions/listen stream per session."""

import asyncio
import sys

import pytest

from approvals.upstream import ServerSpec, SessionPool, open_session
from tests.fixtures.servers import REPO, SERVERS

WATCHED = "test://watched-resource"
HEARD_SECONDS = 10


def conformance_spec() -> ServerSpec:
    command = (sys.executable, str(SERVERS / "conformance_upstream.py"))
    return ServerSpec(name="conformance", transport="stdio", command=command, cwd=str(REPO), timeout=20)


class Heard:
    """What a session's notification handler was told, by method."""

    def __init__(self):
        self.queue: asyncio.Queue = asyncio.Queue()

    async def __call__(self, *arguments):
        method, params = arguments[-2:]  # a pool's handler is told the server first
        await self.queue.put((method, params))

    async def next(self) -> tuple[str, dict]:
        return await asyncio.wait_for(self.queue.get(), HEARD_SECONDS)


@pytest.fixture
async def pool():
    heard = Heard()
    pool = SessionPool(on_notification=heard)
    pool.heard = heard
    yield pool
    await pool.close_all()


async def test_a_session_that_takes_notifications_hears_every_list_change_of_a_modern_server():
    heard = Heard()
    async with open_session(conformance_spec(), on_notification=heard) as session:
        assert session.identity.era == "modern"
        await session.call_tool("announce_list_changes", {})
        methods = {(await heard.next())[0] for _ in range(3)}

    assert methods == {
        "notifications/tools/list_changed",
        "notifications/prompts/list_changed",
        "notifications/resources/list_changed",
    }


async def test_a_pool_subscribes_through_the_listen_stream_until_the_last_holder_lets_go(pool):
    spec = conformance_spec()
    await pool.subscribe(spec, WATCHED, "first")
    await pool.subscribe(spec, WATCHED, "second")
    session = await pool.get(spec)
    await session.call_tool("touch_watched_resource", {})
    updated = await pool.heard.next()
    await pool.release("first")
    await session.call_tool("touch_watched_resource", {})
    still = await pool.heard.next()
    await pool.release("second")
    await session.call_tool("touch_watched_resource", {})
    await session.call_tool("announce_list_changes", {})
    after_the_last = await pool.heard.next()

    assert updated == still == ("notifications/resources/updated", {"uri": WATCHED, "_meta": updated[1]["_meta"]})
    # Once nobody holds the subscription, the update is not asked for: the list changes come first.
    assert after_the_last[0] == "notifications/tools/list_changed"
