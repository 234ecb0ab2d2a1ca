"""A token's calls: the cap on how many may wait at once, and what revoking the token does to those that wait."""

import asyncio

import pytest
from asgiref.sync import sync_to_async

from approvals import roles
from approvals.actions.revocation import revoke_token
from approvals.audit.models import AuditEvent
from approvals.calls import deciding
from approvals.calls.models import Call
from approvals.live import events
from approvals.tokens.credentials import create_token
from approvals.tokens.models import ClientToken
from tests.fixtures.calls import every_call_ended, wait_for_pending_call
from tests.fixtures.gateway import sdk_client
from tests.fixtures.people import make_user
from tests.fixtures.waiting import eventually

both_eras = pytest.mark.parametrize("mode", ["auto", "legacy"], ids=["modern", "legacy"])
LOOKUP = ("demo_lookup_customer", {"customer_id": "C007"})


def text_of(result) -> str:
    return " ".join(block.text for block in result.content if block.type == "text")


async def token_with(**fields) -> tuple[ClientToken, str]:
    return await sync_to_async(create_token)("capped agent", **fields)


@both_eras
async def test_it_answers_a_call_past_the_tokens_pending_cap_with_a_tool_error_saying_how_many_wait(
    mcp_url, demo_server, mode
):
    token, secret = await token_with(max_pending_calls=1)
    async with sdk_client(mcp_url, secret, mode) as client:
        first = asyncio.create_task(client.call_tool(*LOOKUP))
        await wait_for_pending_call()
        second = await asyncio.wait_for(client.call_tool(*LOOKUP), timeout=15)
        first.cancel()
    await every_call_ended()

    assert second.is_error
    assert "at most 1 calls waiting for an operator's decision at once, and 1 are waiting now" in text_of(second)
    assert await Call.objects.acount() == 1
    refused = await AuditEvent.objects.aget(action="call.refused")
    assert refused.token_id == token.pk and "at most 1" in refused.data["reason"]


async def test_it_takes_the_global_cap_for_a_token_without_its_own(mcp_url, demo_server, settings):
    settings.MAX_PENDING_CALLS_PER_TOKEN = 1
    _, secret = await token_with()
    async with sdk_client(mcp_url, secret) as client:
        first = asyncio.create_task(client.call_tool(*LOOKUP))
        await wait_for_pending_call()
        second = await asyncio.wait_for(client.call_tool(*LOOKUP), timeout=15)
        first.cancel()
    await every_call_ended()

    assert second.is_error and "at most 1 calls" in text_of(second)


async def test_it_lets_a_token_whose_own_cap_is_0_hold_calls_beyond_the_global_cap(mcp_url, demo_server, settings):
    settings.MAX_PENDING_CALLS_PER_TOKEN = 1
    _, secret = await token_with(max_pending_calls=0)
    async with sdk_client(mcp_url, secret) as client:
        calls = [asyncio.create_task(client.call_tool(*LOOKUP)) for _ in range(3)]
        await eventually(three_pending, message="three calls pending at once")
        for call in calls:
            call.cancel()
    await every_call_ended()


async def three_pending() -> bool:
    return await Call.objects.filter(status=Call.Status.PENDING).acount() == 3


@both_eras
async def test_it_cancels_a_revoked_tokens_waiting_call_and_tells_its_client(mcp_url, demo_server, joined_groups, mode):
    admin = await sync_to_async(make_user)("root", roles.ADMIN)
    token, secret = await token_with()
    async with sdk_client(mcp_url, secret, mode) as client:
        answer = asyncio.create_task(client.call_tool(*LOOKUP))
        call = await wait_for_pending_call()
        await eventually(lambda: events.call_group(call.pk) in joined_groups, message="the call waiting")
        await sync_to_async(revoke_token)(token, admin)
        result = await asyncio.wait_for(answer, timeout=15)

    assert result.is_error
    assert "cancelled: the client token was revoked" in text_of(result)
    await call.arefresh_from_db()
    assert call.status == Call.Status.CANCELLED
    cancelled = await AuditEvent.objects.aget(action="call.cancelled", call_id=call.pk)
    assert (cancelled.actor_type, cancelled.actor_name) == ("user", "root")
    assert cancelled.data["reason"] == "the client token was revoked"


async def test_it_refuses_an_approval_that_comes_after_the_revocation(mcp_url, demo_server, operator):
    token, secret = await token_with()
    async with sdk_client(mcp_url, secret) as client:
        answer = asyncio.create_task(client.call_tool(*LOOKUP))
        call = await wait_for_pending_call()
        await sync_to_async(revoke_token)(token)
        decision = await sync_to_async(deciding.decide)(call.pk, operator, True)
        result = await asyncio.wait_for(answer, timeout=15)

    assert not decision.won and decision.message == "Already cancelled: the client token was revoked."
    assert result.is_error
    assert not await AuditEvent.objects.filter(action__in=["call.approved", "call.forwarded"]).aexists()
