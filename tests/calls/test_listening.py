"""Events over the channel layer: how they are sent after a commit,
and how a waiting call, input request or change feed listens."""

import asyncio

import pytest
from asgiref.sync import sync_to_async
from channels.layers import InMemoryChannelLayer, get_channel_layer
from django.conf import settings
from django.db import transaction

from approvals.live import events, waiting
from approvals.live.memory_layer import TidiedInMemoryChannelLayer
from tests.fixtures.waiting import eventually


@pytest.mark.services
async def test_it_hands_over_a_message_sent_after_joining():
    async with waiting.listening("call.41") as listener:
        await get_channel_layer().group_send("call.41", {"type": "call.update", "status": "approved"})
        message = await listener.next(timeout=5)
    assert message == {"type": "call.update", "status": "approved"}


@pytest.mark.services
async def test_it_says_none_when_nothing_came_in_time():
    async with waiting.listening("call.42") as listener:
        assert await listener.next(timeout=0.05) is None


@pytest.mark.services
async def test_it_keeps_a_message_that_arrived_between_two_waits():
    layer = get_channel_layer()
    async with waiting.listening("call.43") as listener:
        assert await listener.next(timeout=0.01) is None
        await layer.group_send("call.43", {"type": "call.update", "status": "denied"})
        await eventually(listener.receiving.done, message="the message reaching the listener between two waits")
        first = await listener.next(timeout=5)
        await layer.group_send("call.43", {"type": "call.update", "status": "cancelled"})
        second = await listener.next(timeout=5)
    assert [first["status"], second["status"]] == ["denied", "cancelled"]


@pytest.mark.redis
async def test_it_leaves_no_redis_subscription_behind():
    from redis import asyncio as aioredis

    prefix = settings.CHANNEL_LAYERS["default"]["CONFIG"]["prefix"]
    redis = aioredis.from_url(settings.REDIS_URL)
    try:
        # The loop's one channel kept open (live.keep_listening) is there before and after.
        await waiting.keep_listening(get_channel_layer())
        before = set(await redis.pubsub_channels(f"{prefix}*"))
        async with waiting.listening("call.45") as listener:
            await get_channel_layer().group_send("call.45", {"type": "call.update", "status": "approved"})
            assert await listener.next(timeout=5) is not None
            while_listening = set(await redis.pubsub_channels(f"{prefix}*"))

        # Unsubscribing goes out on the layer's own connection: Redis applies it a moment later.
        async def unsubscribed():
            return set(await redis.pubsub_channels(f"{prefix}*")) == before

        await eventually(unsubscribed, message="the listener's channels unsubscribed")
    finally:
        await redis.aclose()
    # The group's channel and the listener's own one, both gone afterwards.
    assert len(while_listening - before) == 2


@pytest.mark.django_db(transaction=True)
async def test_it_sends_from_the_serving_loop_while_the_committing_thread_goes_on(monkeypatch):
    layer = get_channel_layer()
    release, delivered = asyncio.Event(), []

    async def slow_send(sends):
        await release.wait()
        delivered.extend(group for group, _ in sends)

    monkeypatch.setattr(layer, "group_send_many", slow_send)
    events.SERVING_LOOP.set(asyncio.get_running_loop())

    def commit_a_change():
        with transaction.atomic():
            events.send_after_commit(("call.46", {"type": "call.update", "status": "approved"}))

    # Were the thread to wait for the send, it would wait for ever: the send waits on this test.
    await asyncio.wait_for(sync_to_async(commit_a_change)(), timeout=5)
    assert delivered == []
    release.set()
    await eventually(lambda: delivered, message="the send")
    assert delivered == ["call.46"]


@pytest.mark.django_db(transaction=True)
async def test_it_logs_a_send_that_failed_without_failing_the_change(monkeypatch, caplog):
    async def broken_send(sends):
        raise ConnectionError("Redis went away")

    monkeypatch.setattr(get_channel_layer(), "group_send_many", broken_send)
    events.SERVING_LOOP.set(asyncio.get_running_loop())

    def commit_a_change():
        with transaction.atomic():
            events.send_after_commit(("call.47", {"type": "call.update", "status": "approved"}))
        return "committed"

    assert await sync_to_async(commit_a_change)() == "committed"
    await eventually(lambda: caplog.records, message="the failed send logged")
    assert [r.getMessage() for r in caplog.records] == ["an event could not be sent to the channel layer"]
    assert "Redis went away" in caplog.text


@pytest.mark.django_db(transaction=True)
def test_it_sends_before_the_commit_returns_where_no_loop_serves():
    delivered = []
    layer = get_channel_layer()

    async def recording_send(sends):
        delivered.extend(group for group, _ in sends)

    layer.group_send_many = recording_send
    with transaction.atomic():
        events.send_after_commit(("call.48", {"type": "call.update", "status": "approved"}))
    assert delivered == ["call.48"]


async def test_it_walks_the_embedded_layers_groups_for_expired_messages_at_most_once_a_second(monkeypatch):
    walks = []
    walk = InMemoryChannelLayer._clean_expired
    monkeypatch.setattr(InMemoryChannelLayer, "_clean_expired", lambda self: walks.append(1) or walk(self))
    layer = TidiedInMemoryChannelLayer()
    channel = await layer.new_channel()
    for n in range(50):
        await layer.group_add(f"call.{n}", channel)

    for n in range(50):
        await layer.group_send(f"call.{n}", {"type": "call.update"})
        await layer.receive(channel)

    assert len(walks) == 1
