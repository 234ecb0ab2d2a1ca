"""Waiting for a group's messages: what a waiting call, input request or change feed listens with."""

import asyncio

import pytest
from channels.layers import get_channel_layer
from django.conf import settings

from approvals import live


async def test_it_hands_over_a_message_sent_after_joining():
    async with live.listening("call.41") as listener:
        await get_channel_layer().group_send("call.41", {"type": "call.update", "status": "approved"})
        message = await listener.next(timeout=5)
    assert message == {"type": "call.update", "status": "approved"}


async def test_it_says_none_when_nothing_came_in_time():
    async with live.listening("call.42") as listener:
        assert await listener.next(timeout=0.05) is None


async def test_it_keeps_a_message_that_arrived_between_two_waits():
    layer = get_channel_layer()
    async with live.listening("call.43") as listener:
        assert await listener.next(timeout=0.01) is None
        await layer.group_send("call.43", {"type": "call.update", "status": "denied"})
        await asyncio.sleep(0.2)
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
        await live.keep_listening(get_channel_layer())
        before = set(await redis.pubsub_channels(f"{prefix}*"))
        async with live.listening("call.45") as listener:
            await get_channel_layer().group_send("call.45", {"type": "call.update", "status": "approved"})
            assert await listener.next(timeout=5) is not None
            while_listening = set(await redis.pubsub_channels(f"{prefix}*"))
        # Unsubscribing goes out on the layer's own connection: give Redis a moment to apply it.
        for _ in range(50):
            after = set(await redis.pubsub_channels(f"{prefix}*"))
            if after == before:
                break
            await asyncio.sleep(0.02)
    finally:
        await redis.aclose()
    # The group's channel and the listener's own one, both gone afterwards.
    assert len(while_listening - before) == 2
    assert after == before
