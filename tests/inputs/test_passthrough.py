"""Passthrough routing: the client answers what the upstream server asks, on its era's own channel.

A legacy client gets elicitation/create on the call's SSE stream and answers by
POST; a 2026-07-28 client gets input_required with the console's signed
requestState and retries. Both through raw HTTP, and through the official SDK
client with an elicitation callback.
"""

import asyncio
import json
import shlex
import sys
import time

import httpx
import mcp_types as types
import pytest
from asgiref.sync import sync_to_async

from approvals.audit.models import AuditEvent
from approvals.calls import continuations
from approvals.inputs import requests
from approvals.inputs.models import InputRequest
from approvals.protocol.request_state import sign_state
from tests.fixtures.catalog import add_synced_server
from tests.fixtures.gateway import LEGACY, MODERN, modern_envelope, sdk_client
from tests.fixtures.servers import SERVERS
from tests.inputs.conftest import route_to_client, wait_for_input

ELICITATION = {"elicitation": {}}
CONFORMANCE_UPSTREAM = shlex.join([sys.executable, str(SERVERS / "conformance_upstream.py")])


@pytest.fixture
def passthrough(sdk_upstream):
    route_to_client(sdk_upstream)
    return sdk_upstream


class Person:
    """An elicitation callback that answers like a person at the client would, and remembers what it was asked."""

    def __init__(self, action="accept", content=None):
        self.action, self.content, self.asked = action, content, []

    async def __call__(self, context, params):
        self.asked.append(params)
        return types.ElicitResult(action=self.action, content=self.content)


def events(lines) -> list[dict]:
    return [json.loads(line[len("data: ") :]) for line in lines if line.startswith("data: ")]


class LegacyClient:
    """A legacy session by hand, on httpx: the call's stream is read as it arrives."""

    def __init__(self, mcp_url, secret):
        self.url = mcp_url
        self.http = httpx.AsyncClient(
            timeout=30, headers={"Authorization": f"Bearer {secret}", "Accept": "application/json, text/event-stream"}
        )
        self.session = None

    async def initialize(self, capabilities):
        params = {
            "protocolVersion": LEGACY,
            "capabilities": capabilities,
            "clientInfo": {"name": "raw", "version": "0"},
        }
        response = await self.http.post(
            self.url, json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
        )
        self.session = response.headers["Mcp-Session-Id"]

    def headers(self):
        return {"Mcp-Session-Id": self.session, "MCP-Protocol-Version": LEGACY}

    async def post(self, message):
        return await self.http.post(self.url, json=message, headers=self.headers())

    async def call_answering(self, name, arguments, answer):
        """tools/call on a stream; each request the console sends on it is answered with `answer(request)`."""
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
        asked = []
        async with self.http.stream("POST", self.url, json=body, headers=self.headers()) as response:
            async for line in response.aiter_lines():
                for message in events([line]):
                    if "method" in message and "id" in message:
                        asked.append(message)
                        reply = await self.post({"jsonrpc": "2.0", "id": message["id"], **await answer(message)})
                        assert reply.status_code == 202
                    elif message.get("id") == 1:
                        return asked, message


async def test_it_sends_a_legacy_client_elicitation_create_on_the_calls_stream_and_takes_its_posted_answer(
    mcp_url, secret, passthrough
):
    client = LegacyClient(mcp_url, secret)
    await client.initialize(ELICITATION)

    async def accept(message):
        return {"result": {"action": "accept", "content": {"confirm": True}}}

    asked, final = await client.call_answering("sdk_delete_record", {"target": "r1"}, accept)
    await client.http.aclose()

    [request] = asked
    assert request["method"] == "elicitation/create" and request["params"]["message"] == "Really delete r1?"
    assert request["id"].startswith("sdk/")
    assert final["result"]["content"][0]["text"] == "deleted r1"
    stored = await InputRequest.objects.aget()
    assert (stored.routed_to, stored.status, stored.client_key) == ("client", "passed_through", request["id"])
    actions = [e.action async for e in AuditEvent.objects.filter(action__startswith="input.").order_by("seq")]
    assert actions == ["input.requested", "input.passed_through", "input.answered"]


async def test_it_takes_an_answer_only_from_the_session_that_was_asked(mcp_url, secret, passthrough):
    client, intruder = LegacyClient(mcp_url, secret), LegacyClient(mcp_url, secret)
    await client.initialize(ELICITATION)
    await intruder.initialize(ELICITATION)

    async def answer(message):
        forged = {"jsonrpc": "2.0", "id": message["id"], "result": {"action": "accept", "content": {"confirm": True}}}
        assert (await intruder.post(forged)).status_code == 202
        assert (await InputRequest.objects.aget()).status == InputRequest.Status.PENDING
        return {"error": {"code": -1, "message": "the user said no"}}

    _, final = await client.call_answering("sdk_delete_record", {"target": "r9"}, answer)
    await client.http.aclose()
    await intruder.http.aclose()
    # The upstream client stops at a refused input request: the call fails and says why.
    assert final["result"]["isError"] is True and "the user said no" in final["result"]["content"][0]["text"]
    assert (await InputRequest.objects.aget()).answer == {"error": {"code": -1, "message": "the user said no"}}


class ModernClient:
    def __init__(self, mcp_url, secret):
        self.url = mcp_url
        self.http = httpx.AsyncClient(
            timeout=30, headers={"Authorization": f"Bearer {secret}", "Accept": "application/json"}
        )

    async def call(self, msg_id, name, arguments, capabilities=ELICITATION, **extra):
        params = modern_envelope(name=name, arguments=arguments, **extra)
        params["_meta"]["io.modelcontextprotocol/clientCapabilities"] = capabilities
        headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": name}
        response = await self.http.post(
            self.url, json={"jsonrpc": "2.0", "id": msg_id, "method": "tools/call", "params": params}, headers=headers
        )
        return response.json()


def input_requests(result: dict) -> dict:
    """The input requests of an input_required result; a failure that shows what came instead."""
    assert "inputRequests" in result, f"expected the server's input requests, got {result}"
    return result["inputRequests"]


async def test_it_answers_a_2026_client_input_required_with_its_own_signed_state_and_continues_on_the_retry(
    mcp_url, secret, passthrough
):
    client = ModernClient(mcp_url, secret)
    first = (await client.call(1, "sdk_delete_record", {"target": "r1"}))["result"]
    [(key, request)] = input_requests(first).items()
    answers = {key: {"action": "accept", "content": {"confirm": True}}}
    done = (
        await client.call(
            2, "sdk_delete_record", {"target": "r1"}, inputResponses=answers, requestState=first["requestState"]
        )
    )["result"]
    await client.http.aclose()

    assert first["resultType"] == "input_required" and key.startswith("sdk/")
    assert request["method"] == "elicitation/create" and request["params"]["message"] == "Really delete r1?"
    assert first["requestState"].startswith("mcs1.")
    assert done["resultType"] == "complete" and done["content"][0]["text"] == "deleted r1"


async def test_it_refuses_a_tampered_expired_or_misapplied_request_state(mcp_url, secret, passthrough):
    client = ModernClient(mcp_url, secret)
    first = (await client.call(1, "sdk_delete_record", {"target": "r1"}))["result"]
    [key] = input_requests(first)
    state = first["requestState"]
    answers = {key: {"action": "decline"}}
    call_id = (await InputRequest.objects.aget()).call_id

    async def retry(msg_id, request_state, target="r1"):
        return await client.call(
            msg_id, "sdk_delete_record", {"target": target}, inputResponses=answers, requestState=request_state
        )

    tampered = state[:-2] + ("AA" if not state.endswith("AA") else "BB")
    expired = sign_state(
        {"call": call_id, "token": 1, "keys": [key]}, continuations.state_key(), now=time.time() - 3600, lifetime=60
    )
    other_token = sign_state(
        {"call": call_id, "token": 10**6, "keys": [key]}, continuations.state_key(), now=time.time(), lifetime=60
    )
    refusals = [
        await retry(2, tampered),
        await retry(3, expired),
        await retry(4, other_token),
        await retry(5, state, target="r2"),
    ]
    assert [r["error"]["code"] for r in refusals] == [-32602] * 4
    assert "altered" in refusals[0]["error"]["message"] and "expired" in refusals[1]["error"]["message"]
    assert (
        "another client or call" in refusals[2]["error"]["message"]
        and "repeat the call's name and arguments" in refusals[3]["error"]["message"]
    )
    assert (await InputRequest.objects.aget()).status == InputRequest.Status.PENDING

    done = (await retry(6, state))["result"]
    await client.http.aclose()
    assert done["content"][0]["text"] == "kept r1 (decline)"


@pytest.mark.parametrize("mode", ["auto", "legacy"], ids=["modern-client", "legacy-client"])
async def test_it_lets_an_sdk_client_answer_through_its_elicitation_callback(mcp_url, secret, passthrough, mode):
    person = Person("accept", {"confirm": True})
    async with sdk_client(mcp_url, secret, mode, elicitation_callback=person) as client:
        result = await client.call_tool("sdk_delete_record", {"target": "r5"})

    assert result.content[0].text == "deleted r5"
    [params] = person.asked
    assert params.message == "Really delete r5?"
    assert (await InputRequest.objects.aget()).status == InputRequest.Status.PASSED_THROUGH


async def test_it_asks_an_operator_when_the_client_declared_no_elicitation(mcp_url, secret, passthrough, operator):
    async with sdk_client(mcp_url, secret) as client:
        answer = asyncio.create_task(client.call_tool("sdk_delete_record", {"target": "r6"}))
        request = await wait_for_input()
        assert request.routed_to == InputRequest.Route.OPERATOR
        await sync_to_async(requests.answer)(request.pk, operator, "accept", {"confirm": False})
        result = await asyncio.wait_for(answer, 15)
    assert result.content[0].text == "kept r6 (accept)"


@pytest.mark.parametrize("mode", ["auto", "legacy"], ids=["modern-client", "legacy-client"])
async def test_it_passes_a_legacy_servers_elicitation_to_an_sdk_client_of_either_era(
    mcp_url, secret, everything_upstream, mode
):
    await sync_to_async(route_to_client)(everything_upstream)
    person = Person("accept", {"name": "Grace Hopper", "integer": 9})
    async with sdk_client(mcp_url, secret, mode, elicitation_callback=person) as client:
        result = await client.call_tool("everything_trigger-elicitation-request", {})

    text = " ".join(block.text for block in result.content)
    assert "- Name: Grace Hopper" in text and "- Favorite Integer: 9" in text
    [params] = person.asked
    assert params.requested_schema["properties"]["legacyTitledEnum"]["enumNames"][0] == "Cats"


@pytest.mark.parametrize("mode", ["auto", "legacy"], ids=["modern-client", "legacy-client"])
async def test_it_passes_sampling_to_an_sdk_client_that_declared_it(mcp_url, secret, allow_all, mode):
    server = await sync_to_async(add_synced_server)("conformance", transport="stdio", command=CONFORMANCE_UPSTREAM)
    await sync_to_async(route_to_client)(server)
    prompts = []

    async def sampling(context, params):
        prompts.append(params.messages[0].content.text)
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="Forty-two."), model="test-model"
        )

    async with sdk_client(mcp_url, secret, mode, sampling_callback=sampling) as client:
        result = await client.call_tool("conformance_test_sampling", {"prompt": "What is six times seven?"})

    assert result.content[0].text == "LLM response: Forty-two."
    assert prompts == ["What is six times seven?"]
    request = await InputRequest.objects.aget()
    assert (request.method, request.routed_to, request.status) == ("sampling/createMessage", "client", "passed_through")
    assert request.message == "What is six times seven?"


async def test_it_gives_the_server_an_error_for_a_malformed_answer_from_the_client(mcp_url, secret, passthrough):
    client = ModernClient(mcp_url, secret)
    first = (await client.call(1, "sdk_delete_record", {"target": "r7"}))["result"]
    [key] = input_requests(first)
    answers = {key: {"action": "maybe"}}
    done = (
        await client.call(
            2, "sdk_delete_record", {"target": "r7"}, inputResponses=answers, requestState=first["requestState"]
        )
    )["result"]
    await client.http.aclose()

    assert done["isError"] is True and "the client's answer is malformed" in done["content"][0]["text"]
    assert (await InputRequest.objects.aget()).answer["error"]["code"] == -32602
