"""`GET /api/v1/events`: the queue's events as Server-Sent Events, with ids to resume from, keep-alives, and
refusals in JSON rather than a stream that never starts."""

import time

import httpx
import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import Group, User

from approvals import roles
from approvals.api import keys
from approvals.api.models import ApiKey
from approvals.calls import deciding
from approvals.live import journal
from tests.api.conftest import bearer, key_of
from tests.api.streams import TIMEOUT, opened, receive


async def test_it_delivers_call_pending_with_an_id(refund, operator_keys, live_console):
    async with httpx.AsyncClient(base_url=live_console, timeout=TIMEOUT) as http:
        events = await opened(http, operator_keys[0])
        call = await sync_to_async(receive)(refund, 20)
        event = await events.next()
        await events.close()

    assert event["event"] == "call.pending" and event["data"] == {"call_id": call.pk, "status": "pending"}
    assert event["id"].split("-")[0].isdigit()


async def test_it_resumes_after_last_event_id_without_loss_or_repeats(refund, operator_keys, live_console):
    ann = operator_keys[0]
    user = await ApiKey.objects.select_related("user").aget(user__username="ann")
    async with httpx.AsyncClient(base_url=live_console, timeout=TIMEOUT) as http:
        events = await opened(http, ann)
        first = await sync_to_async(receive)(refund, 20)
        seen = await events.next()
        await events.close()

        # While no stream is open: a decision and a new call.
        await sync_to_async(deciding.decide)(first.pk, user.user, False, "no")
        second = await sync_to_async(receive)(refund, 30)

        events = await opened(http, ann, after=seen["id"])
        missed = [await events.next(), await events.next()]
        third = await sync_to_async(receive)(refund, 40)
        following = await events.next()
        await events.close()

    assert [(e["event"], e["data"]["call_id"]) for e in missed] == [
        ("call.decided", first.pk),
        ("call.pending", second.pk),
    ]
    assert (following["event"], following["data"]["call_id"]) == ("call.pending", third.pk)
    ids = [tuple(map(int, e["id"].split("-"))) for e in [seen, *missed, following]]
    assert ids == sorted(set(ids))


async def test_it_says_when_events_after_last_event_id_left_the_window(monkeypatch, operator_keys, live_console):
    window = journal.MemoryWindow(size=1)
    monkeypatch.setattr(journal, "_window", window)
    window.append("call.pending", {"call_id": 1, "status": "pending"})
    seen = await window.latest()
    for call_id in (2, 3):
        window.append("call.pending", {"call_id": call_id, "status": "pending"})

    async with httpx.AsyncClient(base_url=live_console, timeout=TIMEOUT) as http:
        events = await opened(http, operator_keys[0], after=seen)
        reset, kept = await events.next(), await events.next()
        await events.close()

    assert reset["event"] == "stream.reset" and "id" not in reset
    assert kept["data"]["call_id"] == 3


async def test_it_keeps_an_idle_stream_open_with_comments(settings, operator_keys, live_console):
    settings.MCP_SSE_KEEPALIVE_SECONDS = 0.2
    async with httpx.AsyncClient(base_url=live_console, timeout=TIMEOUT) as http:
        events = await opened(http, operator_keys[0])
        comment = await events.next(comments=True)
        await events.close()

    assert comment == {"comment": "keep-alive"}


async def test_it_ends_the_stream_within_a_second_once_its_key_is_revoked(settings, operator_keys, live_console):
    settings.SOCKET_ACCESS_RECHECK_SECONDS = 300  # the news ends it, not the periodic check
    key = await ApiKey.objects.select_related("user").aget(user__username="ann")
    async with httpx.AsyncClient(base_url=live_console, timeout=TIMEOUT) as http:
        events = await opened(http, operator_keys[0])
        await sync_to_async(keys.revoke_key)(key.user, key.pk)
        started = time.monotonic()
        ended = await events.next()
        took = time.monotonic() - started
        rest = [line async for line in events.lines]

    assert ended["event"] == "access.ended" and rest == [] and took < 5  # told, not the 300 s recheck


async def test_it_ends_the_stream_within_a_second_once_its_person_loses_the_role(settings, operator_keys, live_console):
    settings.SOCKET_ACCESS_RECHECK_SECONDS = 300
    async with httpx.AsyncClient(base_url=live_console, timeout=TIMEOUT) as http:
        events = await opened(http, operator_keys[0])
        ann = await User.objects.aget(username="ann")
        await sync_to_async(ann.groups.clear)()
        started = time.monotonic()
        ended = await events.next()
        took = time.monotonic() - started

    assert ended["event"] == "access.ended" and took < 5


async def test_it_keeps_the_stream_of_someone_whose_access_changed_but_still_holds(
    settings, operator_keys, live_console, refund
):
    settings.SOCKET_ACCESS_RECHECK_SECONDS = 300
    async with httpx.AsyncClient(base_url=live_console, timeout=TIMEOUT) as http:
        events = await opened(http, operator_keys[0])
        ann = await User.objects.aget(username="ann")
        auditors = await Group.objects.aget(name=roles.AUDITOR)
        await sync_to_async(ann.groups.add)(auditors)
        await sync_to_async(receive)(refund, 20)
        event = await events.next()
        await events.close()

    assert event["event"] == "call.pending"


@pytest.mark.parametrize(
    "headers, status",
    [({}, 401), ({"Authorization": "Bearer mcpk_unknown"}, 401), ("roleless", 403), ("bad id", 400)],
)
def test_it_refuses_in_json_at_once(transactional_db, live_console, headers, status):
    if headers == "roleless":
        headers = bearer(key_of("nobody"))
    elif headers == "bad id":
        headers = bearer(key_of("ann", roles.OPERATOR)) | {"Last-Event-ID": "yesterday"}

    refused = httpx.get(live_console + "/api/v1/events", headers=headers, timeout=5)

    assert refused.status_code == status and refused.json()["detail"]
