"""An operator answers what upstream servers of either era ask a model, in the model's place, or declines;
the reply or the refusal reaches the server and the call ends."""

import asyncio
import json
import shlex
import sys

import pytest
from asgiref.sync import sync_to_async

from approvals.audit.models import AuditEvent
from approvals.inputs import requests
from approvals.inputs.models import InputRequest
from tests.fixtures.catalog import add_synced_server
from tests.fixtures.gateway import sdk_client
from tests.fixtures.servers import SERVERS
from tests.inputs.conftest import wait_for_input

CONFORMANCE_UPSTREAM = shlex.join([sys.executable, str(SERVERS / "conformance_upstream.py")])
both_client_eras = pytest.mark.parametrize("mode", ["auto", "legacy"], ids=["modern-client", "legacy-client"])


def text_of(result) -> str:
    return " ".join(block.text for block in result.content if block.type == "text")


@pytest.fixture
def conformance_upstream(allow_all):
    """A 2026-07-28 server whose test_sampling asks for a completion through input_required."""
    return add_synced_server("conformance", transport="stdio", command=CONFORMANCE_UPSTREAM)


@both_client_eras
async def test_it_asks_an_operator_to_sample_for_a_2026_server_and_sends_their_reply(
    mcp_url, secret, conformance_upstream, operator, mode
):
    async with sdk_client(mcp_url, secret, mode) as client:
        answer = asyncio.create_task(client.call_tool("conformance_test_sampling", {"prompt": "Six times seven?"}))
        asked = await wait_for_input()
        outcome = await sync_to_async(requests.answer)(asked.pk, operator, "accept", {"text": "Forty-two."})
        result = await asyncio.wait_for(answer, 15)

    assert (asked.method, asked.routed_to, asked.message) == ("sampling/createMessage", "operator", "Six times seven?")
    assert outcome.won and text_of(result) == "LLM response: Forty-two."
    request = await InputRequest.objects.aget()
    reply = {
        "role": "assistant",
        "content": {"type": "text", "text": "Forty-two."},
        "model": f"operator:{operator.username}",
        "stopReason": "endTurn",
    }
    assert (request.status, request.answer, request.answered_by_name) == ("answered", reply, operator.username)
    answered = await AuditEvent.objects.aget(action="input.answered", call_id=asked.call_id)
    assert answered.data == {"input_id": asked.pk, **reply}


async def test_it_asks_an_operator_to_sample_for_server_everything_in_the_legacy_era(
    mcp_url, secret, everything_upstream, operator
):
    async with sdk_client(mcp_url, secret) as client:
        answer = asyncio.create_task(
            client.call_tool("everything_trigger-sampling-request", {"prompt": "Name a colour", "maxTokens": 20})
        )
        asked = await wait_for_input()
        empty = await sync_to_async(requests.answer)(asked.pk, operator, "accept", {"text": "  "})
        outcome = await sync_to_async(requests.answer)(asked.pk, operator, "accept", {"text": "Teal."})
        result = await asyncio.wait_for(answer, 15)

    assert asked.params["systemPrompt"] == "You are a helpful test server." and asked.params["maxTokens"] == 20
    assert not empty.won and empty.errors == ["Write the reply the model would give, or decline."]
    assert outcome.won
    sampled = json.loads(text_of(result).partition("\n")[2])
    assert sampled["content"] == {"type": "text", "text": "Teal."}
    assert sampled["model"] == f"operator:{operator.username}"


async def test_it_tells_a_server_whose_sampling_an_operator_declines_that_the_user_rejected_it(
    mcp_url, secret, everything_upstream, operator
):
    async with sdk_client(mcp_url, secret) as client:
        answer = asyncio.create_task(client.call_tool("everything_trigger-sampling-request", {"prompt": "Hi"}))
        asked = await wait_for_input()
        cancelled = await sync_to_async(requests.answer)(asked.pk, operator, "cancel")
        outcome = await sync_to_async(requests.answer)(asked.pk, operator, "decline")
        result = await asyncio.wait_for(answer, 15)

    assert not cancelled.won and outcome.won
    assert result.is_error and "User rejected sampling request" in text_of(result)
    request = await InputRequest.objects.aget()
    assert request.status == "declined"
    assert request.answer == {"error": {"code": -1, "message": "User rejected sampling request"}}


async def test_it_asks_an_operator_to_sample_even_for_a_capable_client_when_the_server_routes_input_to_them(
    mcp_url, secret, conformance_upstream, operator
):
    async def sampling(context, params):
        raise AssertionError("the operator, not the client, answers this server's sampling")

    async with sdk_client(mcp_url, secret, sampling_callback=sampling) as client:
        answer = asyncio.create_task(client.call_tool("conformance_test_sampling", {"prompt": "Hello?"}))
        asked = await wait_for_input()
        await sync_to_async(requests.answer)(asked.pk, operator, "accept", {"text": "Hello."})
        result = await asyncio.wait_for(answer, 15)

    assert asked.routed_to == "operator" and text_of(result) == "LLM response: Hello."
