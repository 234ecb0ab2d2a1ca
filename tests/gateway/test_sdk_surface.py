"""The official SDK client, in both modes, using server-everything's resources and prompts through the console.

Its subscriptions too: a modern client listens, a legacy one subscribes and hears updates on its GET stream.
"""

import asyncio
import base64

import pytest
from asgiref.sync import sync_to_async
from mcp import MCPError
from mcp.client.subscriptions import ResourceUpdated
from mcp_types import PromptReference, ResourceTemplateReference, ResourceUpdatedNotification

from approvals.audit.models import AuditEvent
from approvals.policy.models import PolicyRule
from approvals.tokens.credentials import create_token
from tests.fixtures.gateway import sdk_client

# The SDK's default mode finds the modern era through server/discover; "legacy" forces initialize.
both_modes = pytest.mark.parametrize("mode", ["auto", "legacy"], ids=["modern", "legacy"])
TEXT_TEMPLATE = "demo://resource/dynamic/text/{resourceId}"
# server-everything sends an update when its updates start, then every five seconds.
UPDATE_SECONDS = 15


@pytest.fixture
def everything(transactional_db, everything_http, add_fixed_server):
    return add_fixed_server("everything", transport="http", url=everything_http.url)


async def every_resource(client) -> list:
    resources, cursor = [], None
    while True:
        page = await client.list_resources(cursor=cursor)
        resources += page.resources
        cursor = page.next_cursor
        if cursor is None:
            return resources


@both_modes
async def test_it_lists_and_reads_text_and_blob_resources(mcp_url, secret, everything, settings, mode):
    settings.MCP_TOOLS_PAGE_SIZE = 3
    async with sdk_client(mcp_url, secret, mode) as client:
        resources = await every_resource(client)
        templates = (await client.list_resource_templates()).resource_templates
        document = await client.read_resource(resources[0].uri)
        text = await client.read_resource("demo://resource/dynamic/text/7")
        blob = await client.read_resource("demo://resource/dynamic/blob/7")

    assert len(resources) > 3  # more than one page
    assert all(resource.name.startswith("everything_") for resource in resources)
    assert {t.uri_template for t in templates} >= {TEXT_TEMPLATE, "demo://resource/dynamic/blob/{resourceId}"}
    assert document.contents[0].uri == resources[0].uri
    assert text.contents[0].text.startswith("Resource 7: This is a plaintext resource")
    assert base64.b64decode(blob.contents[0].blob).startswith(b"Resource 7: This is a base64 blob")


@both_modes
async def test_it_lists_and_gets_prompts_and_completes_arguments(mcp_url, secret, everything, mode):
    async with sdk_client(mcp_url, secret, mode) as client:
        names = [prompt.name for prompt in (await client.list_prompts()).prompts]
        simple = await client.get_prompt("everything_simple-prompt")
        team = await client.get_prompt("everything_completable-prompt", {"department": "Sales", "name": "Eve"})
        departments = await client.complete(
            PromptReference(type="ref/prompt", name="everything_completable-prompt"),
            {"name": "department", "value": "S"},
        )
        members = await client.complete(
            PromptReference(type="ref/prompt", name="everything_completable-prompt"),
            {"name": "name", "value": ""},
            context_arguments={"department": "Engineering"},
        )
        ids = await client.complete(
            ResourceTemplateReference(type="ref/resource", uri=TEXT_TEMPLATE), {"name": "resourceId", "value": "12"}
        )

    assert {"everything_simple-prompt", "everything_completable-prompt"} <= set(names)
    assert simple.messages[0].content.text == "This is a simple prompt without arguments."
    assert team.messages[0].content.text == "Please promote Eve to the head of the Sales team."
    assert departments.completion.values == ["Sales", "Support"]
    assert members.completion.values == ["Alice", "Bob", "Charlie"]
    assert ids.completion.values == ["12"]


@both_modes
async def test_it_answers_bad_input_with_errors_the_client_raises(mcp_url, secret, everything, mode):
    async with sdk_client(mcp_url, secret, mode) as client:
        with pytest.raises(MCPError) as unknown:
            await client.read_resource("demo://nowhere")
        with pytest.raises(MCPError) as missing:
            await client.get_prompt("everything_completable-prompt", {"department": "Sales"})

    assert unknown.value.error.code == (-32602 if mode == "auto" else -32002)
    assert missing.value.error.code == -32602 and "missing required name" in missing.value.error.message


@both_modes
async def test_a_token_scoped_away_from_the_server_sees_nothing_of_it(mcp_url, everything, mode):
    _, narrow = await sync_to_async(create_token)("narrow", ["elsewhere_*"])
    async with sdk_client(mcp_url, narrow, mode) as client:
        prompts = (await client.list_prompts()).prompts
        resources = (await client.list_resources()).resources
        with pytest.raises(MCPError):
            await client.read_resource("demo://resource/dynamic/text/1")

    assert prompts == [] and resources == []


async def start_updates(client):
    """server-everything sends updates of what its session subscribed to once this tool started them (it toggles)."""
    for _ in range(2):
        result = await client.call_tool("everything_toggle-subscriber-updates", {})
        if result.content[0].text.startswith("Started"):
            return


@pytest.fixture
def updates_allowed(everything):
    PolicyRule.objects.create(
        name="updates", action=PolicyRule.Action.ALLOW, tool_glob="everything_toggle-subscriber-updates"
    )


async def test_a_modern_client_listening_to_a_resource_hears_its_updates(mcp_url, secret, updates_allowed):
    async with sdk_client(mcp_url, secret) as client:
        uri = (await every_resource(client))[0].uri
        async with client.listen(resource_subscriptions=[uri]) as subscription:
            await start_updates(client)
            update = await asyncio.wait_for(anext(subscription), UPDATE_SECONDS)

    assert subscription.honored.resource_subscriptions == [uri]
    assert update == ResourceUpdated(uri=uri)


@pytest.mark.filterwarnings("ignore:resources/(un)?subscribe is removed")
async def test_a_legacy_client_subscribed_to_a_resource_hears_its_updates_on_its_stream(
    mcp_url, secret, updates_allowed
):
    updates = asyncio.Queue()

    async def on_message(message):
        if isinstance(message, ResourceUpdatedNotification):
            await updates.put(message.params.uri)

    async with sdk_client(mcp_url, secret, "legacy", message_handler=on_message) as client:
        uri = (await every_resource(client))[0].uri
        await client.subscribe_resource(uri)
        await start_updates(client)
        updated = await asyncio.wait_for(updates.get(), UPDATE_SECONDS)
        await client.unsubscribe_resource(uri)

    assert updated == uri
    subscribed = await sync_to_async(AuditEvent.objects.get)(action="resource.subscribed")
    assert subscribed.data["uri"] == uri and subscribed.data["outcome"] == "answered"
    assert await sync_to_async(AuditEvent.objects.filter(action="resource.unsubscribed").exists)()
