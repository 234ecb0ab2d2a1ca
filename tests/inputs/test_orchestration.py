"""The input handler a forwarded call gives its upstream session: waits, answers, timeouts, cancellation, refusals."""

import asyncio
import time
import uuid
from datetime import timedelta

import pytest
from asgiref.sync import sync_to_async
from django.utils import timezone

from approvals.audit.chain import Actor
from approvals.audit.models import AuditEvent
from approvals.calls import ending
from approvals.calls.models import Call
from approvals.catalog.models import Server
from approvals.inputs import requests, runner
from approvals.inputs.models import InputRequest
from approvals.live import events
from approvals.protocol import revisions
from approvals.protocol.canonical import sha256_digest
from approvals.protocol.jsonrpc import INVALID_PARAMS, METHOD_NOT_FOUND, JsonRpcError
from approvals.tokens.context import ClientContext
from tests.fixtures.waiting import eventually
from tests.inputs.conftest import wait_for_input

pytestmark = pytest.mark.django_db(transaction=True)

ELICITATION = {"elicitation": {}}
CONFIRM = {
    "message": "Refund 20 EUR?",
    "requestedSchema": {
        "type": "object",
        "properties": {"amount": {"type": "number", "maximum": 50, "default": 20}},
        "required": ["amount"],
    },
}


@pytest.fixture
def forwarded(client_token, refund_tool):
    arguments = {"order_id": 7, "amount": 20}
    return Call.objects.create(
        token=client_token,
        tool=refund_tool,
        server=refund_tool.server,
        tool_name=refund_tool.exposed_name,
        request_id=str(uuid.uuid4()),
        era=revisions.MODERN,
        protocol_version="2026-07-28",
        arguments=arguments,
        arguments_digest=sha256_digest(arguments),
        tool_digest=refund_tool.digest,
        status=Call.Status.FORWARDED,
    )


def handler(call, capabilities=None, era=revisions.LEGACY, streaming=True, sent=None, version="2025-11-25"):
    ctx = ClientContext(call.token, era, version, capabilities=capabilities or {}, streaming=streaming)

    async def emit(message):
        if sent is not None:
            sent.append(message)

    return runner.input_handler(call, ctx, emit)


async def actions_of(call) -> list[str]:
    return [
        e.action async for e in AuditEvent.objects.filter(call_id=call.pk, action__startswith="input.").order_by("seq")
    ]


async def test_it_wakes_on_the_operators_answer_through_the_channel_layer(
    forwarded, operators, settings, joined_groups
):
    settings.CALL_REREAD_SECONDS = 30  # far longer than the test: only the channel message can wake it
    waiting = asyncio.create_task(handler(forwarded)("elicitation/create", CONFIRM))
    asked = await wait_for_input()
    await eventually(lambda: events.input_group(asked.pk) in joined_groups, message="the handler listening")
    started = time.monotonic()
    await sync_to_async(requests.answer)(asked.pk, operators[0], "accept", {"amount": 12.5})
    assert await asyncio.wait_for(waiting, 5) == {"action": "accept", "content": {"amount": 12.5}}
    assert time.monotonic() - started < 10
    assert await actions_of(forwarded) == ["input.requested", "input.answered"]


async def test_it_keeps_a_form_that_does_not_fit_pending_and_says_why(forwarded, operators):
    waiting = asyncio.create_task(handler(forwarded)("elicitation/create", CONFIRM))
    asked = await wait_for_input()
    refused = await sync_to_async(requests.answer)(asked.pk, operators[0], "accept", {"amount": 99, "note": "x"})
    assert not refused.won and set(refused.errors) == {"'note' was not asked for", "'amount': must be at most 50"}
    assert (await InputRequest.objects.aget()).status == InputRequest.Status.PENDING
    await sync_to_async(requests.answer)(asked.pk, operators[0], "decline")
    assert await asyncio.wait_for(waiting, 5) == {"action": "decline"}


async def test_it_expires_a_request_nobody_answers_and_tells_the_server_cancel(forwarded, settings):
    settings.INPUT_TIMEOUT_SECONDS = 0.3
    settings.CALL_REREAD_SECONDS = 0.1
    answer = await asyncio.wait_for(handler(forwarded)("elicitation/create", CONFIRM), 5)
    request = await InputRequest.objects.aget()
    assert answer == {"action": "cancel"}
    assert request.status == InputRequest.Status.EXPIRED and "nobody answered within" in request.reason
    assert await actions_of(forwarded) == ["input.requested", "input.expired"]


async def test_it_cancels_what_a_call_waits_for_when_the_client_leaves(forwarded, client_token):
    waiting = asyncio.create_task(handler(forwarded)("elicitation/create", CONFIRM))
    await wait_for_input()
    await sync_to_async(ending.cancel_running)(
        forwarded.pk, "the client closed the request", Actor.client(client_token)
    )
    assert await asyncio.wait_for(waiting, 5) == {"action": "cancel"}
    request = await InputRequest.objects.aget()
    assert (request.status, request.reason) == (InputRequest.Status.CANCELLED, "the client closed the request")
    assert await actions_of(forwarded) == ["input.requested", "input.cancelled"]


async def test_it_cancels_the_request_when_its_handler_is_cancelled(forwarded):
    waiting = asyncio.create_task(handler(forwarded)("elicitation/create", CONFIRM))
    await wait_for_input()
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert (await InputRequest.objects.aget()).status == InputRequest.Status.CANCELLED


async def test_it_refuses_a_schema_outside_the_subset_and_answers_the_server_decline(forwarded):
    nested = {
        "message": "Where to?",
        "requestedSchema": {"type": "object", "properties": {"address": {"type": "object"}}},
    }
    answer = await handler(forwarded)("elicitation/create", nested)
    request = await InputRequest.objects.aget()
    assert answer == {"action": "decline"}
    assert request.status == InputRequest.Status.REFUSED
    assert "property 'address'" in request.reason and "nested objects" in request.reason
    assert await actions_of(forwarded) == ["input.refused"]


PROMPT = {
    "messages": [{"role": "user", "content": {"type": "text", "text": "Summarise order 7"}}],
    "maxTokens": 50,
}


@pytest.mark.parametrize("capabilities", [ELICITATION, {"sampling": {}}], ids=["not-declared", "declared"])
async def test_it_asks_an_operator_to_sample_unless_the_server_routes_input_to_capable_clients(
    forwarded, operators, capabilities
):
    waiting = asyncio.create_task(handler(forwarded, capabilities)("sampling/createMessage", PROMPT))
    asked = await wait_for_input()
    await sync_to_async(requests.answer)(asked.pk, operators[0], "accept", {"text": "Order 7: one refund."})
    reply = await asyncio.wait_for(waiting, 5)
    assert (asked.routed_to, asked.message) == ("operator", "Summarise order 7")
    assert reply["content"] == {"type": "text", "text": "Order 7: one refund."}
    assert (reply["role"], reply["model"], reply["stopReason"]) == ("assistant", "operator:ann", "endTurn")
    assert await actions_of(forwarded) == ["input.requested", "input.answered"]


async def test_it_answers_an_operators_decline_of_sampling_with_mcps_user_rejected(forwarded, operators):
    waiting = asyncio.create_task(handler(forwarded)("sampling/createMessage", PROMPT))
    asked = await wait_for_input()
    await sync_to_async(requests.answer)(asked.pk, operators[0], "decline")
    with pytest.raises(JsonRpcError) as caught:
        await asyncio.wait_for(waiting, 5)
    assert (caught.value.code, caught.value.message) == (-1, "User rejected sampling request")


async def test_it_tells_the_server_a_sampling_request_nobody_answered_was_rejected(forwarded, settings):
    settings.INPUT_TIMEOUT_SECONDS = 0.3
    settings.CALL_REREAD_SECONDS = 0.1
    with pytest.raises(JsonRpcError) as caught:
        await asyncio.wait_for(handler(forwarded)("sampling/createMessage", PROMPT), 5)
    assert caught.value.code == requests.SAMPLING_REJECTED and "nobody answered within" in caught.value.message
    assert (await InputRequest.objects.aget()).status == InputRequest.Status.EXPIRED


@pytest.mark.parametrize(
    "params, problem",
    [
        ({"messages": "hi", "maxTokens": 5}, "'messages' must be a list"),
        ({"messages": [{"role": "system", "content": {"type": "text", "text": "x"}}], "maxTokens": 5}, "'role'"),
        ({"messages": [{"role": "user", "content": "x"}], "maxTokens": 5}, "'content' must be a content block"),
        ({"messages": [], "maxTokens": 0}, "'maxTokens' must be a positive integer"),
        ({"messages": [], "maxTokens": 5, "includeContext": "everything"}, "'includeContext' must be one of"),
    ],
)
async def test_it_refuses_a_malformed_sampling_request_as_invalid_params(forwarded, params, problem):
    with pytest.raises(JsonRpcError) as caught:
        await handler(forwarded)("sampling/createMessage", params)
    assert caught.value.code == INVALID_PARAMS and problem in caught.value.message
    request = await InputRequest.objects.aget()
    assert request.status == InputRequest.Status.REFUSED and problem in request.reason
    assert await actions_of(forwarded) == ["input.refused"]


async def test_it_answers_a_method_it_does_not_serve_as_unsupported(forwarded):
    with pytest.raises(JsonRpcError) as caught:
        await handler(forwarded)("roots/list", {})
    assert caught.value.code == METHOD_NOT_FOUND


async def test_it_asks_an_operator_when_routing_says_so_even_if_the_client_could_answer(forwarded):
    waiting = asyncio.create_task(handler(forwarded, capabilities={"elicitation": {}})("elicitation/create", CONFIRM))
    asked = await wait_for_input()
    assert asked.routed_to == InputRequest.Route.OPERATOR
    waiting.cancel()
    await asyncio.gather(waiting, return_exceptions=True)


@pytest.mark.parametrize(
    "capabilities, streaming, mode, expected",
    [
        ({"elicitation": {}}, True, "form", "client"),
        ({"elicitation": {"form": {}}}, True, "url", "operator"),
        ({"elicitation": {"url": {}}}, True, "url", "client"),
        ({"elicitation": {}}, False, "form", "operator"),
        ({"sampling": {}}, True, "form", "operator"),
    ],
)
async def test_it_passes_elicitation_to_a_legacy_client_only_when_it_declared_the_mode_and_streams(
    forwarded, capabilities, streaming, mode, expected
):
    forwarded.tool.server.input_routing = Server.InputRouting.CLIENT_IF_CAPABLE
    params = {"mode": "url", "message": "Sign in", "url": "https://auth.example/x"} if mode == "url" else CONFIRM
    sent = []
    waiting = asyncio.create_task(
        handler(forwarded, capabilities, streaming=streaming, sent=sent)("elicitation/create", params)
    )
    asked = await wait_for_input()
    assert asked.routed_to == expected
    if expected == "client":
        await eventually(lambda: sent, message="the request passed to the client")
        assert sent == [{"jsonrpc": "2.0", "id": asked.client_key, "method": "elicitation/create", "params": params}]
        assert asked.client_key.startswith("shop/")
    waiting.cancel()
    await asyncio.gather(waiting, return_exceptions=True)


async def test_it_words_a_form_for_a_2025_06_18_client_without_the_mode_it_does_not_know(forwarded):
    forwarded.tool.server.input_routing = Server.InputRouting.CLIENT_IF_CAPABLE
    sent = []
    waiting = asyncio.create_task(
        handler(forwarded, ELICITATION, sent=sent, version="2025-06-18")(
            "elicitation/create", {**CONFIRM, "mode": "form"}
        )
    )
    await wait_for_input()
    await eventually(lambda: sent, message="the request passed to the client")
    assert sent[0]["params"] == CONFIRM
    waiting.cancel()
    await asyncio.gather(waiting, return_exceptions=True)


async def test_it_passes_sampling_to_a_client_that_declared_it_when_the_server_routes_input_to_clients(forwarded):
    forwarded.tool.server.input_routing = Server.InputRouting.CLIENT_IF_CAPABLE
    sent = []
    waiting = asyncio.create_task(handler(forwarded, {"sampling": {}}, sent=sent)("sampling/createMessage", PROMPT))
    asked = await wait_for_input()
    await eventually(lambda: sent, message="the prompt passed to the client")
    assert (asked.routed_to, asked.message) == ("client", "Summarise order 7")
    assert sent[0]["method"] == "sampling/createMessage" and sent[0]["id"] == asked.client_key
    reply = {"role": "assistant", "content": {"type": "text", "text": "Done."}, "model": "m"}
    assert await sync_to_async(requests.take_client_answer)(InputRequest.objects.filter(pk=asked.pk), reply)
    assert await asyncio.wait_for(waiting, 5) == reply


def test_it_expires_what_a_crashed_process_left_waiting(forwarded):
    request = requests.open_request(forwarded, "elicitation/create", CONFIRM, InputRequest.Route.OPERATOR)
    InputRequest.objects.filter(pk=request.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert requests.expire_stale_requests() == 1
    request.refresh_from_db()
    assert request.status == InputRequest.Status.EXPIRED
    assert requests.expire_stale_requests() == 0
