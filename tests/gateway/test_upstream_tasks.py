"""A tool its server runs only as a task (server-everything's simulate-research-query) through the console."""

import asyncio

import pytest
from asgiref.sync import sync_to_async

from approvals.audit.models import AuditEvent
from approvals.calls.models import Call
from approvals.catalog.models import Tool
from approvals.inputs import requests
from approvals.inputs.models import InputRequest
from approvals.policy.models import PolicyRule
from tests.fixtures.catalog import add_synced_server
from tests.fixtures.gateway import sdk_client
from tests.fixtures.waiting import eventually, wait_until
from tests.gateway.test_ts_sdk_tasks import finished, of_type, start_client, text_of

RESEARCH = "everything_simulate-research-query"
both_eras = pytest.mark.parametrize("mode", ["auto", "legacy"], ids=["modern", "legacy"])


@pytest.fixture
def everything(transactional_db, everything_http):
    PolicyRule.objects.create(name="test upstreams", action="allow", tool_glob="*")
    return add_synced_server("everything", transport="http", url=everything_http.url)


def test_it_keeps_a_tools_task_support_in_its_definition_and_lists_it(everything):
    tool = Tool.objects.get(exposed_name=RESEARCH)

    assert tool.definition["execution"] == {"taskSupport": "required"}


async def test_it_runs_the_tool_as_a_task_upstream_for_a_typescript_client_following_a_task(
    mcp_url, secret, everything
):
    client = await start_client(mcp_url, secret, "task", (RESEARCH, {"topic": "tides"}))

    lines = await finished(client)

    assert not of_type(lines, "error"), lines
    assert "Research Report: tides" in text_of(of_type(lines, "result")[0]["result"])
    call = await Call.objects.aget()
    assert call.status == Call.Status.COMPLETED and call.task_id


@both_eras
async def test_it_waits_on_the_upstream_task_for_a_client_that_did_not_ask_for_one(mcp_url, secret, everything, mode):
    async with sdk_client(mcp_url, secret, mode) as client:
        result = await client.call_tool(RESEARCH, {"topic": "tides"})

    assert not result.is_error, result
    assert "Research Report: tides" in result.content[0].text
    call = await Call.objects.aget()
    assert call.status == Call.Status.COMPLETED and call.task_id is None
    assert call.upstream_task_id and call.upstream_task_status == "completed"
    noted = AuditEvent.objects.filter(action="call.upstream_task", call_id=call.pk).order_by("seq")
    statuses = [data["status"] async for data in noted.values_list("data", flat=True)]
    # Each change once, however often the console polled: working, each stage's message aside, then completed.
    assert statuses == ["working", "completed"]


async def test_it_brings_what_the_upstream_task_asks_to_an_operator_and_its_answer_back(
    mcp_url, secret, everything, operator
):
    async with sdk_client(mcp_url, secret, "legacy") as client:
        answer = asyncio.create_task(client.call_tool(RESEARCH, {"topic": "python", "ambiguous": True}))
        asked = await eventually(
            InputRequest.objects.filter(status=InputRequest.Status.PENDING).afirst, message="the task's question"
        )
        choice = asked.params["requestedSchema"]["properties"]["interpretation"]["oneOf"][0]["const"]
        await sync_to_async(requests.answer)(asked.pk, operator, "accept", {"interpretation": choice})
        result = await asyncio.wait_for(answer, timeout=20)

    assert not result.is_error, result
    assert f"Clarification**: {choice}" in result.content[0].text


def test_it_cancels_the_upstream_task_when_the_client_cancels_its_own(raw, everything):
    session_id = raw.initialize()
    research = {"name": RESEARCH, "arguments": {"topic": "tides"}}
    task_id = raw.legacy(session_id, "tools/call", **research, task={}).json()["result"]["task"]["taskId"]
    wait_until(lambda: Call.objects.get().upstream_task_status == "working", timeout=15, message="the upstream task")

    cancelled = raw.legacy(session_id, "tasks/cancel", taskId=task_id).json()["result"]

    assert cancelled["status"] == "cancelled"
    wait_until(
        lambda: Call.objects.get().upstream_task_status == "cancelled", timeout=15, message="the upstream's cancel"
    )
    call = Call.objects.get()
    assert call.status == Call.Status.CANCELLED and call.result is None
