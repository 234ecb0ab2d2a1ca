"""A live console whose upstream servers ask for input mid-call, and ways to answer as operator or client."""

import asyncio

import pytest

from approvals.models import InputRequest, PolicyRule, Server
from tests.gateway.conftest import add_synced_server, mcp_url, operator, secret  # noqa: F401 (fixtures)


@pytest.fixture
def allow_all(transactional_db):
    PolicyRule.objects.create(name="inputs tests", action="allow", tool_glob="*")


@pytest.fixture
def sdk_upstream(sdk_server, allow_all):
    """The official-SDK server (2026-07-28), synced: delete_record elicits through Resolve/Elicit."""
    return add_synced_server("sdk", transport="http", url=sdk_server.url)


@pytest.fixture
def everything_upstream(everything_http, allow_all):
    """server-everything (legacy era), synced: trigger-elicitation-request asks for every field type."""
    return add_synced_server("everything", transport="http", url=everything_http.url)


def route_to_client(server: Server):
    Server.objects.filter(pk=server.pk).update(input_routing=Server.InputRouting.CLIENT_IF_CAPABLE)


async def wait_for_input(timeout=15.0) -> InputRequest:
    """The first input request still waiting for its answer, once there is one."""
    deadline = asyncio.get_running_loop().time() + timeout
    while asyncio.get_running_loop().time() < deadline:
        found = await InputRequest.objects.filter(status=InputRequest.Status.PENDING).select_related("call").afirst()
        if found is not None:
            return found
        await asyncio.sleep(0.05)
    raise AssertionError("no input request became pending")
