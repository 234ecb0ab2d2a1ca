"""An operator answers what upstream servers of either era ask mid-call;
the answer reaches them and the call completes."""

import asyncio

import pytest
from asgiref.sync import sync_to_async

from approvals import roles
from approvals.audit.models import AuditEvent
from approvals.calls.models import Call
from approvals.inputs import requests
from approvals.inputs.models import InputRequest
from tests.fixtures.gateway import sdk_client
from tests.fixtures.people import make_user
from tests.inputs.conftest import wait_for_input

both_client_eras = pytest.mark.parametrize("mode", ["auto", "legacy"], ids=["modern-client", "legacy-client"])


def text_of(result) -> str:
    return " ".join(block.text for block in result.content if block.type == "text")


@both_client_eras
async def test_it_asks_an_operator_what_a_2026_sdk_server_elicits_and_forwards_the_answer(
    mcp_url, secret, sdk_upstream, operator, mode
):
    async with sdk_client(mcp_url, secret, mode) as client:
        answer = asyncio.create_task(client.call_tool("sdk_delete_record", {"target": "r1"}))
        asked = await wait_for_input()
        outcome = await sync_to_async(requests.answer)(asked.pk, operator, "accept", {"confirm": True})
        result = await asyncio.wait_for(answer, 15)

    assert (asked.routed_to, asked.mode, asked.message) == ("operator", "form", "Really delete r1?")
    assert asked.params["requestedSchema"]["properties"]["confirm"]["type"] == "boolean"
    assert outcome.won and outcome.message == "Answered."
    assert text_of(result) == "deleted r1"
    assert (await Call.objects.aget()).status == Call.Status.COMPLETED
    actions = [e.action async for e in AuditEvent.objects.filter(call_id=asked.call_id).order_by("seq")]
    assert actions.index("input.requested") < actions.index("input.answered") < actions.index("call.completed")


@pytest.mark.parametrize("action, said", [("decline", "decline"), ("cancel", "cancel")])
async def test_it_forwards_a_decline_or_cancel_to_a_2026_sdk_server(
    mcp_url, secret, sdk_upstream, operator, action, said
):
    async with sdk_client(mcp_url, secret) as client:
        answer = asyncio.create_task(client.call_tool("sdk_delete_record", {"target": "r2"}))
        asked = await wait_for_input()
        await sync_to_async(requests.answer)(asked.pk, operator, action)
        result = await asyncio.wait_for(answer, 15)

    assert text_of(result) == f"kept r2 ({said})"
    assert (await InputRequest.objects.aget()).answer == {"action": action}


async def test_it_asks_an_operator_what_server_everything_elicits_in_the_legacy_era(
    mcp_url, secret, everything_upstream, operator
):
    content = {
        "name": "Ada Lovelace",
        "check": True,
        "email": "ada@example.com",
        "integer": 7,
        "untitledMultipleSelectEnum": ["Piano"],
    }
    async with sdk_client(mcp_url, secret) as client:
        answer = asyncio.create_task(client.call_tool("everything_trigger-elicitation-request", {}))
        asked = await wait_for_input()
        refused = await sync_to_async(requests.answer)(asked.pk, operator, "accept", {**content, "integer": 1000})
        outcome = await sync_to_async(requests.answer)(asked.pk, operator, "accept", content)
        result = await asyncio.wait_for(answer, 15)

    assert not refused.won and refused.errors == ["'integer': must be at most 100"]
    assert outcome.won
    text = text_of(result)
    assert "User provided the requested information" in text
    assert "- Name: Ada Lovelace" in text and "- Favorite Integer: 7" in text


async def test_it_tells_the_second_of_two_operators_who_answered_first(mcp_url, secret, sdk_upstream, operator):
    bob = await sync_to_async(make_user)("bob", roles.OPERATOR)
    async with sdk_client(mcp_url, secret) as client:
        answer = asyncio.create_task(client.call_tool("sdk_delete_record", {"target": "r3"}))
        asked = await wait_for_input()
        first, second = await asyncio.gather(
            sync_to_async(requests.answer)(asked.pk, operator, "accept", {"confirm": True}),
            sync_to_async(requests.answer)(asked.pk, bob, "decline"),
        )
        result = await asyncio.wait_for(answer, 15)

    assert sorted([first.won, second.won]) == [False, True]
    loser = first if not first.won else second
    winner_name = "olivia" if second is loser else "bob"
    assert loser.message.startswith("Already") and loser.message.endswith(f"by {winner_name}.")
    assert text_of(result) in ("deleted r3", "kept r3 (decline)")
    assert await AuditEvent.objects.filter(action="input.answered").acount() == 1
