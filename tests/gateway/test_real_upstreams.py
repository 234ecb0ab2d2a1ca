"""The console between the SDK client and upstream servers it did not write: server-everything and an SDK server."""

import pytest
from asgiref.sync import sync_to_async

from approvals.policy.models import PolicyRule
from tests.fixtures.catalog import add_synced_server
from tests.fixtures.gateway import sdk_client


@pytest.fixture
def allow_everything(transactional_db):
    PolicyRule.objects.create(name="test upstreams", action="allow", tool_glob="*")


async def test_it_relays_a_modern_client_to_server_everything_over_http(
    mcp_url, secret, everything_http, allow_everything
):
    await sync_to_async(add_synced_server)("everything", transport="http", url=everything_http.url)

    async with sdk_client(mcp_url, secret) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        result = await client.call_tool("everything_echo", {"message": "through the console"})

    assert "everything_echo" in names
    assert not result.is_error
    assert "through the console" in result.content[0].text


async def test_it_relays_a_legacy_client_to_an_sdk_server_speaking_2026(mcp_url, secret, sdk_server, allow_everything):
    await sync_to_async(add_synced_server)("sdk", transport="http", url=sdk_server.url)

    async with sdk_client(mcp_url, secret, mode="legacy") as client:
        result = await client.call_tool("sdk_weather", {"city": "Lisbon"})

    assert not result.is_error
    assert result.structured_content == {"city": "Lisbon", "temperature": 21.5, "conditions": "sunny"}
