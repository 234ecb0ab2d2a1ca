"""Subscriptions and list changes for clients of either era: what is promised, what is refused, what is told."""

import asyncio
import json
import shlex
import sys

import pytest
from asgiref.sync import sync_to_async
from mcp.client.subscriptions import PromptsListChanged, ResourcesListChanged
from mcp_types import PromptListChangedNotification, ResourceListChangedNotification

from approvals.audit.models import AuditEvent
from approvals.catalog.models import Server
from approvals.policy.models import PolicyRule
from approvals.tokens.models import McpSession
from tests.fixtures.catalog import SURFACE_COMMAND, add_synced_server, make_server
from tests.fixtures.gateway import MODERN, modern_envelope, sdk_client
from tests.fixtures.servers import SERVERS
from tests.fixtures.waiting import eventually

both_modes = pytest.mark.parametrize("mode", ["auto", "legacy"], ids=["modern", "legacy"])
CHANGE_SECONDS = 15
# Which list a change names, as the SDK hands it over: a notification in the legacy era, an event in a listen stream.
LISTS = {
    ResourceListChangedNotification: "resources",
    PromptListChangedNotification: "prompts",
    ResourcesListChanged: "resources",
    PromptsListChanged: "prompts",
}


def result_of(response) -> dict:
    assert response.status_code == 200, response.text
    return response.json()["result"]


def listen_ack(raw, notifications: dict) -> dict:
    """The acknowledgement that opens a 2026-07-28 listen stream asking for `notifications`."""
    params = modern_envelope(notifications=notifications)
    body = {"jsonrpc": "2.0", "id": 5, "method": "subscriptions/listen", "params": params}
    headers = {
        **raw.headers,
        "Content-Type": "application/json",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "subscriptions/listen",
    }
    with raw.client.stream("POST", raw.url, json=body, headers=headers) as response:
        first = next(line for line in response.iter_lines() if line.startswith("data: "))
    return json.loads(first[len("data: ") :])["params"]["notifications"]


def test_a_listen_stream_honours_only_the_lists_and_resources_it_can_serve(raw, surface_server):
    ack = listen_ack(
        raw,
        {
            "toolsListChanged": True,
            "resourcesListChanged": True,
            "promptsListChanged": True,
            "resourceSubscriptions": ["docs://readme", "docs://nowhere"],
        },
    )

    assert ack == {
        "toolsListChanged": True,
        "resourcesListChanged": True,
        "promptsListChanged": True,
        "resourceSubscriptions": ["docs://readme"],
    }


def test_a_legacy_subscription_is_kept_with_the_session_and_audited(raw, surface_server):
    session_id = raw.initialize()

    subscribed = raw.legacy(session_id, "resources/subscribe", uri="docs://readme")
    unknown = raw.legacy(session_id, "resources/subscribe", msg_id=2, uri="docs://nowhere")
    kept = McpSession.objects.get(pk=session_id).resource_subscriptions
    unsubscribed = raw.legacy(session_id, "resources/unsubscribe", msg_id=3, uri="docs://readme")

    assert result_of(subscribed) == {} and kept == ["docs://readme"]
    assert unknown.json()["error"]["code"] == -32002
    assert result_of(unsubscribed) == {}
    assert McpSession.objects.get(pk=session_id).resource_subscriptions == []
    subscribing = AuditEvent.objects.filter(action__in=["resource.subscribed", "resource.unsubscribed"])
    actions = list(subscribing.values_list("action", "data__outcome"))
    assert actions == [
        ("resource.subscribed", "answered"),
        ("resource.subscribed", "unknown"),
        ("resource.unsubscribed", "answered"),
    ]


def test_it_refuses_to_subscribe_to_a_resource_of_a_server_that_offers_no_subscriptions(raw, db):
    server = make_server("Plain", capabilities={"resources": {}})
    server.resources.create(uri="plain://a", upstream_name="a", exposed_name="plain_a", definition={}, digest="x")
    session_id = raw.initialize()

    refused = raw.legacy(session_id, "resources/subscribe", uri="plain://a")

    assert refused.json()["error"]["code"] == -32602
    assert "offers no subscriptions" in refused.json()["error"]["message"]


@both_modes
async def test_it_tells_clients_when_the_resource_and_prompt_lists_change(mcp_url, secret, surface_server, mode):
    heard = asyncio.Queue()

    async def on_message(message):
        if isinstance(message, ResourceListChangedNotification | PromptListChangedNotification):
            await heard.put(LISTS[type(message)])

    async def add_another_server():
        await sync_to_async(add_synced_server)("surface two", transport="stdio", command=SURFACE_COMMAND)

    async with sdk_client(mcp_url, secret, mode, message_handler=on_message) as client:
        if mode == "legacy":
            await client.list_resources()  # the GET stream is open once the session has been used
            await add_another_server()
            changes = {await asyncio.wait_for(heard.get(), CHANGE_SECONDS) for _ in range(2)}
        else:
            async with client.listen(resources_list_changed=True, prompts_list_changed=True) as subscription:
                await add_another_server()
                changes = {LISTS[type(await asyncio.wait_for(anext(subscription), CHANGE_SECONDS))] for _ in range(2)}
        prompts = {prompt.name for prompt in (await client.list_prompts()).prompts}

    assert changes == {"resources", "prompts"}
    assert any(name.startswith("surface_two_") for name in prompts)


async def test_a_modern_server_that_announces_a_list_change_on_its_listen_stream_is_synced(mcp_url, secret):
    """The session a call runs on listens (2026-07-28 has no GET stream): the announcement syncs the server."""
    command = shlex.join([sys.executable, str(SERVERS / "conformance_upstream.py")])
    server = await sync_to_async(add_synced_server)("conformance", transport="stdio", command=command, tool_prefix="")
    await PolicyRule.objects.acreate(name="announce", action=PolicyRule.Action.ALLOW, tool_glob="announce_list_changes")
    synced = (await Server.objects.aget(pk=server.pk)).last_sync_at

    async with sdk_client(mcp_url, secret) as client:
        await client.call_tool("announce_list_changes", {})

    async def synced_again():
        return (await Server.objects.aget(pk=server.pk)).last_sync_at > synced

    await eventually(synced_again, timeout=CHANGE_SECONDS, message="the announced change synced")
