"""The news a commit sends once it is in: each event loop's outbox sends it in the order the commits came, whatever
queued while it sent going out together, on Redis in one round trip."""

import asyncio
import logging

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings
from django.db import transaction

from approvals.live import events
from tests.fixtures.waiting import eventually


def news(call_id: int) -> tuple[tuple[str, dict], ...]:
    """What a call's change sends: a wake-up to its own group, then the operators' news."""
    return (
        events.to_waiters(events.call_group(call_id), "call.update", status="approved"),
        (events.OPERATORS, {"type": "call.event", "event": "call.approved", "call_id": call_id}),
    )


def commit_a_batch(loop: asyncio.AbstractEventLoop, *calls: int) -> list:
    """One transaction per call, as the loop's batch of writes commits them, what each hands the loop gathered."""
    with events.gathered_for_the_loop(loop) as handed:
        for call_id in calls:
            with transaction.atomic():
                events.send_after_commit(*news(call_id))
    return handed


async def committed(*calls: int):
    loop = asyncio.get_running_loop()
    events.SERVING_LOOP.set(loop)
    events.run_gathered(await sync_to_async(commit_a_batch)(loop, *calls))


async def joined(layer, *groups: str) -> str:
    channel = await layer.new_channel()
    for group in groups:
        await layer.group_add(group, channel)
    return channel


async def received(layer, channel: str, count: int) -> list[tuple]:
    async with asyncio.timeout(10):
        return [what(await layer.receive(channel)) for _ in range(count)]


def what(message: dict) -> tuple:
    return message.get("group", events.OPERATORS), message["type"], message.get("call_id")


def in_order(*calls: int) -> list[tuple]:
    return [(group, message["type"], message.get("call_id")) for call_id in calls for group, message in news(call_id)]


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
async def test_it_sends_the_news_of_a_batchs_commits_in_the_order_they_committed(monkeypatch):
    layer = get_channel_layer()
    channel = await joined(layer, "call.61", "call.62", events.OPERATORS)
    group_send = layer.group_send

    async def send_taking_a_moment(group, message):
        # As a send over the network does: another commit's news could go out meanwhile.
        await asyncio.sleep(0)
        await group_send(group, message)

    monkeypatch.setattr(layer, "group_send", send_taking_a_moment)

    await committed(61, 62)

    assert await received(layer, channel, 4) == in_order(61, 62)


@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
async def test_it_publishes_what_queued_together_in_one_round_trip_to_redis(monkeypatch):
    from redis.asyncio.connection import AbstractConnection

    layer = get_channel_layer()
    channel = await joined(layer, "call.63", "call.64", "call.65", events.OPERATORS)
    publishing = []
    send_packed_command = AbstractConnection.send_packed_command

    async def noting(connection, command, *args, **kwargs):
        packed = b"".join(command) if isinstance(command, list) else command
        publishing.extend([packed.count(b"PUBLISH")] if b"PUBLISH" in packed else [])
        return await send_packed_command(connection, command, *args, **kwargs)

    monkeypatch.setattr(AbstractConnection, "send_packed_command", noting)

    await committed(63, 64, 65)

    assert await received(layer, channel, 6) == in_order(63, 64, 65)
    # Six messages to four groups: one write of six PUBLISHes, one round trip.
    assert publishing == [6]


@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
async def test_another_process_receives_every_message_in_order():
    from channels_redis.pubsub import RedisPubSubChannelLayer

    # Another process's layer: channels_redis's own, as the console's was before it published many at once.
    elsewhere = RedisPubSubChannelLayer(**settings.CHANNEL_LAYERS["default"]["CONFIG"])
    try:
        channel = await joined(elsewhere, "call.66", "call.67", events.OPERATORS)

        await committed(66)
        await committed(67)

        assert await received(elsewhere, channel, 4) == in_order(66, 67)
    finally:
        await elsewhere.flush()


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
async def test_it_logs_a_failed_send_and_sends_what_queued_meanwhile(monkeypatch, caplog):
    layer = get_channel_layer()
    channel = await joined(layer, "call.68", "call.69", events.OPERATORS)
    group_send_many = layer.group_send_many
    failing, queued = asyncio.Event(), asyncio.Event()

    async def failing_once(sends):
        if not failing.is_set():
            failing.set()
            await queued.wait()
            raise ConnectionError("Redis went away")
        await group_send_many(sends)

    monkeypatch.setattr(layer, "group_send_many", failing_once)

    await committed(68)
    await eventually(failing.is_set, message="the first send under way")
    await committed(69)
    queued.set()

    assert await received(layer, channel, 2) == in_order(69)
    failures = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert [r.getMessage() for r in failures] == ["an event could not be sent to the channel layer"]
    assert "Redis went away" in caplog.text

    await committed(68)
    assert await received(layer, channel, 2) == in_order(68)


@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
async def test_a_thread_no_loop_serves_sends_its_news_itself():
    layer = get_channel_layer()
    channel = await joined(layer, "call.70", events.OPERATORS)

    def commit_as_a_worker_does():
        # A celery worker or a command: no event loop serves the thread, so its commit sends before it returns.
        with transaction.atomic():
            events.send_after_commit(*news(70))

    await asyncio.to_thread(commit_as_a_worker_does)

    assert await received(layer, channel, 2) == in_order(70)
