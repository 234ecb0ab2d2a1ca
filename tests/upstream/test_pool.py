"""SessionPool: long-lived sessions, reopened with backoff when they die, closed without leftovers."""

import asyncio
import json
import os
import signal
import sys
import time

import pytest

from approvals.upstream import ServerSpec, SessionPool, UpstreamError
from approvals.upstream.pool import running_loop_pool
from tests.fixtures.processes import gone
from tests.fixtures.servers import scenario_spec
from tests.fixtures.waiting import eventually


async def pids(session) -> dict:
    return json.loads((await session.call_tool("pids", {}))["content"][0]["text"])


@pytest.fixture
async def pool():
    pool = SessionPool()
    yield pool
    await pool.close_all()


async def test_it_keeps_one_session_per_server_while_it_lives(pool):
    spec = scenario_spec("family")
    first = await pool.get(spec)
    assert await pool.get(spec) is first


async def test_it_restarts_a_stdio_child_that_was_killed(pool):
    spec = scenario_spec("family")
    session = await pool.get(spec)
    child = (await pids(session))["child"]
    os.kill(child, signal.SIGKILL)
    await eventually(lambda: not session.alive, timeout=5, message="the session noticing its child died")
    restarted = await pool.get(spec)
    assert restarted is not session
    assert (await pids(restarted))["child"] != child


async def test_it_backs_off_exponentially_from_a_server_that_keeps_failing(pool):
    spec = ServerSpec(
        name="crashing", transport="stdio", command=(sys.executable, "-c", "raise SystemExit(1)"), timeout=0.6
    )
    with pytest.raises(UpstreamError):
        await pool.get(spec)
    started = time.monotonic()
    with pytest.raises(UpstreamError):
        await pool.get(spec)  # waits out the first backoff (0.5 s), then fails again
    assert time.monotonic() - started >= 0.45
    started = time.monotonic()
    with pytest.raises(UpstreamError) as caught:
        await pool.get(spec)  # the next backoff (1 s) is longer than a wait may be: refused at once
    assert caught.value.retryable and "next attempt" in caught.value.message
    assert time.monotonic() - started < 0.9


async def test_it_reconnects_when_a_servers_configuration_changes(pool):
    first = await pool.get(scenario_spec("family"))
    second = await pool.get(scenario_spec("family", env={"CHANGED": "1"}))
    assert second is not first and not first.alive


async def test_it_keeps_a_session_for_each_persons_connection_and_closes_them_all_with_their_server(pool):
    ann, bob = (
        await pool.get(scenario_spec("family", identity="1")),
        await pool.get(scenario_spec("family", identity="2")),
    )
    assert ann is not bob
    assert await pool.get(scenario_spec("family", identity="1")) is ann and ann.alive and bob.alive
    await pool.close("family")
    assert not ann.alive and not bob.alive


async def test_it_leaves_no_process_behind_when_closed(pool):
    session = await pool.get(scenario_spec("family"))
    family = await pids(session)
    await pool.close_all()
    # A killed process takes a moment to go.
    await eventually(lambda: gone(family["child"]) and gone(family["grandchild"]), timeout=2, message="both gone")


async def test_it_closes_one_server_s_session_and_opens_afresh_on_its_next_use(pool):
    closing, staying = await pool.get(scenario_spec("family")), await pool.get(scenario_spec("other"))
    family = await pids(closing)
    await pool.close("family")
    await eventually(lambda: gone(family["child"]) and gone(family["grandchild"]), timeout=2, message="both gone")
    assert not closing.alive and staying.alive
    assert (await pool.get(scenario_spec("family"))) is not closing


async def test_it_keeps_only_the_sessions_of_the_servers_named(pool):
    kept, dropped = await pool.get(scenario_spec("family")), await pool.get(scenario_spec("other"))
    await pool.keep_only({"family"})
    assert kept.alive and not dropped.alive


def test_it_makes_one_pool_for_each_event_loop_and_keeps_it_there():
    made = []

    def make():
        made.append(SessionPool())
        return made[-1]

    async def twice():
        return running_loop_pool(make), running_loop_pool(make)

    first, again = asyncio.run(twice())
    other, _ = asyncio.run(twice())
    assert first is again and other is not first and made == [first, other]
