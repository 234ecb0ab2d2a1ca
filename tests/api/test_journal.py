"""The window of events the stream reads: ordered ids, reads after an id, and knowing when one left it."""

import asyncio

import pytest
from django.db import transaction

from approvals.live import events as live
from approvals.live import journal
from approvals.live.journal import STREAM_KEY, MemoryWindow, RedisWindow


async def test_it_reads_what_came_after_an_id_in_order():
    window = MemoryWindow()
    window.append("call.pending", {"call_id": 1})
    start = await window.latest()
    for n in (2, 3):
        window.append("call.pending", {"call_id": n})

    found = await window.read(start, timeout=0.1)

    assert [e.data["call_id"] for e in found] == [2, 3]
    assert journal.parse_id(start) < journal.parse_id(found[0].id) < journal.parse_id(found[1].id)


async def test_it_wakes_a_waiting_read_from_another_thread():
    window = MemoryWindow()
    start = await window.latest()
    reading = asyncio.ensure_future(window.read(start, timeout=5))
    await asyncio.sleep(0.05)

    await asyncio.to_thread(window.append, "input.pending", {"input_id": 4})

    assert [e.event for e in await asyncio.wait_for(reading, 2)] == ["input.pending"]


async def test_it_knows_when_events_after_an_id_left_the_window():
    window = MemoryWindow(size=2)
    window.append("call.pending", {"call_id": 1})
    first = await window.latest()
    window.append("call.pending", {"call_id": 2})
    second = await window.latest()
    window.append("call.pending", {"call_id": 3})

    assert await window.lost_after("0-0") and not await window.lost_after(first)
    assert not await window.lost_after(second)
    window.append("call.pending", {"call_id": 4})
    assert await window.lost_after(first)


async def test_it_counts_what_came_before_its_process_as_lost():
    earlier = MemoryWindow()
    earlier.append("call.pending", {"call_id": 1})
    seen = await earlier.latest()
    await asyncio.sleep(0.01)

    assert await MemoryWindow().lost_after(seen)


def test_it_appends_only_once_the_change_commits(transactional_db, monkeypatch):
    window = MemoryWindow()
    monkeypatch.setattr(journal, "_window", window)

    with transaction.atomic():
        journal.note("call.pending", call_id=1)
        assert not window.entries
    with pytest.raises(RuntimeError), transaction.atomic():
        journal.note("call.pending", call_id=2)
        raise RuntimeError("rolled back")

    assert [e.data for e in window.entries] == [{"call_id": 1}]


@pytest.mark.redis
async def test_it_keeps_the_window_in_redis_for_every_process(settings):
    writer, reader = RedisWindow(settings.REDIS_URL), RedisWindow(settings.REDIS_URL)
    writer.client.delete(STREAM_KEY)
    writer.append("call.pending", {"call_id": 1})
    start = await reader.latest()
    writer.append("call.decided", {"call_id": 1, "status": "approved"})
    writer.append("call.pending", {"call_id": 2})

    found = await reader.read(start, timeout=1)
    kept_whole = not await reader.lost_after("0-0")
    writer.client.xtrim(STREAM_KEY, maxlen=1, approximate=False)

    assert [(e.event, e.data["call_id"]) for e in found] == [("call.decided", 1), ("call.pending", 2)]
    assert kept_whole and await reader.lost_after(start) and not await reader.lost_after(found[1].id)
    writer.client.delete(STREAM_KEY)


@pytest.mark.redis
async def test_it_has_a_web_processs_loop_write_to_redis_in_order(settings):
    window = RedisWindow(settings.REDIS_URL)
    window.client.delete(STREAM_KEY)
    token = live.SERVING_LOOP.set(asyncio.get_running_loop())
    try:
        start = await window.latest()
        await asyncio.to_thread(lambda: [window.append("call.pending", {"call_id": n}) for n in range(50)])
        found = []
        while len(found) < 50:
            found += await window.read(found[-1].id if found else start, timeout=2)
    finally:
        live.SERVING_LOOP.reset(token)
        window.client.delete(STREAM_KEY)

    assert [e.data["call_id"] for e in found] == list(range(50))
