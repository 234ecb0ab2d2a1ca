"""A live console whose upstream servers ask for input mid-call, and ways to answer as operator or client."""

import uuid

import pytest

from approvals.calls.models import Call
from approvals.catalog.models import Server
from approvals.inputs.models import InputRequest
from approvals.policy.models import PolicyRule
from approvals.protocol import revisions
from approvals.protocol.canonical import sha256_digest
from approvals.tokens.credentials import create_token
from tests.fixtures.catalog import make_server, make_tool
from tests.fixtures.waiting import eventually


@pytest.fixture
def allow_all(transactional_db):
    PolicyRule.objects.create(name="inputs tests", action="allow", tool_glob="*")


@pytest.fixture
def sdk_upstream(sdk_server, allow_all, add_fixed_server):
    """The official-SDK server (2026-07-28), synced: delete_record elicits through Resolve/Elicit."""
    return add_fixed_server("sdk", transport="http", url=sdk_server.url)


@pytest.fixture
def everything_upstream(everything_http, allow_all, add_fixed_server):
    """server-everything (legacy era), synced: trigger-elicitation-request asks for every field type."""
    return add_fixed_server("everything", transport="http", url=everything_http.url)


@pytest.fixture
def call(db):
    server = make_server("Billing", transport=Server.Transport.STDIO, command="true", tool_prefix="billing_")
    tool = make_tool(server, "refund")
    token, _ = create_token("agent 7")
    return Call.objects.create(
        token=token,
        tool=tool,
        server=server,
        tool_name=tool.exposed_name,
        request_id=str(uuid.uuid4()),
        era=revisions.MODERN,
        protocol_version="2026-07-28",
        arguments={},
        arguments_digest=sha256_digest({}),
        tool_digest=tool.digest,
        status=Call.Status.FORWARDED,
    )


def route_to_client(server: Server):
    Server.objects.filter(pk=server.pk).update(input_routing=Server.InputRouting.CLIENT_IF_CAPABLE)


async def wait_for_input(timeout=15.0) -> InputRequest:
    """The first input request still waiting for its answer, once there is one."""
    pending = InputRequest.objects.filter(status=InputRequest.Status.PENDING).select_related("call")
    return await eventually(pending.afirst, timeout=timeout, message="an input request waiting for its answer")
