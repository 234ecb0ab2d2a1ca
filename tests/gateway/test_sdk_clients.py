"""The official SDK client, in both eras, calling the demo server through the console."""

import asyncio

import pytest
from asgiref.sync import sync_to_async

from approvals.calls import deciding
from approvals.calls.models import Call
from approvals.policy.models import PolicyRule
from tests.fixtures.calls import wait_for_pending_call
from tests.fixtures.gateway import sdk_client
from tests.fixtures.waiting import eventually

# The SDK's default mode finds the modern era through server/discover; "legacy" forces initialize.
both_eras = pytest.mark.parametrize("mode", ["auto", "legacy"], ids=["modern", "legacy"])


def text_of(result) -> str:
    return " ".join(block.text for block in result.content if block.type == "text")


@both_eras
async def test_it_lists_the_upstream_tools_under_their_exposed_names(mcp_url, secret, demo_server, mode):
    async with sdk_client(mcp_url, secret, mode) as client:
        listed = await client.list_tools()

    names = [tool.name for tool in listed.tools]
    assert names == sorted(names)
    assert {"demo_lookup_customer", "demo_search_orders", "demo_delete_record"} <= set(names)
    lookup = next(tool for tool in listed.tools if tool.name == "demo_lookup_customer")
    assert lookup.title == "Look up a customer"
    assert lookup.input_schema["properties"]["customer_id"]["pattern"] == "^C[0-9]{3}$"


@both_eras
async def test_it_runs_an_allowed_call_upstream_and_answers_its_result(mcp_url, secret, demo_server, mode):
    await PolicyRule.objects.acreate(name="reads are fine", action="allow", tool_glob="demo_lookup_*")

    async with sdk_client(mcp_url, secret, mode) as client:
        result = await client.call_tool("demo_lookup_customer", {"customer_id": "C007"})

    assert not result.is_error, text_of(result)
    assert "C007" in text_of(result)
    call = await Call.objects.aget()
    assert call.status == Call.Status.COMPLETED
    assert call.era == ("modern" if mode == "auto" else "legacy")


@both_eras
async def test_it_answers_a_denied_call_with_the_rules_message(mcp_url, secret, demo_server, mode):
    await PolicyRule.objects.acreate(
        name="no deletions", action="deny", tool_glob="demo_delete_*", message="Deleting needs a change ticket."
    )

    async with sdk_client(mcp_url, secret, mode) as client:
        result = await client.call_tool("demo_delete_record", {"record_type": "order", "record_id": "O1012"})

    assert result.is_error
    assert "Deleting needs a change ticket." in text_of(result)
    assert (await Call.objects.aget()).status == Call.Status.DENIED


@both_eras
async def test_it_holds_an_unmatched_call_until_an_operator_approves_it(mcp_url, secret, demo_server, operator, mode):
    async with sdk_client(mcp_url, secret, mode) as client:
        answer = asyncio.create_task(client.call_tool("demo_lookup_customer", {"customer_id": "C007"}))
        call = await wait_for_pending_call()
        # A real pause, not a wait: the call must stay unanswered while time passes with no decision.
        await asyncio.sleep(0.3)
        assert not answer.done()

        decision = await sync_to_async(deciding.decide)(call.pk, operator, True)
        result = await asyncio.wait_for(answer, timeout=15)

    assert decision.won
    assert not result.is_error, text_of(result)
    assert "C007" in text_of(result)


@both_eras
async def test_it_answers_an_operators_denial_with_the_reason(mcp_url, secret, demo_server, operator, mode):
    async with sdk_client(mcp_url, secret, mode) as client:
        answer = asyncio.create_task(
            client.call_tool("demo_delete_record", {"record_type": "order", "record_id": "O1012"})
        )
        call = await wait_for_pending_call()
        await sync_to_async(deciding.decide)(call.pk, operator, False, "not during the audit")
        result = await asyncio.wait_for(answer, timeout=15)

    assert result.is_error
    assert "not during the audit" in text_of(result)


@both_eras
async def test_it_sends_progress_while_a_call_waits_when_the_client_asked_for_it(
    mcp_url, secret, demo_server, operator, mode
):
    progress = []

    async def on_progress(value, total, message):
        progress.append(message)

    async with sdk_client(mcp_url, secret, mode) as client:
        answer = asyncio.create_task(
            client.call_tool("demo_lookup_customer", {"customer_id": "C007"}, progress_callback=on_progress)
        )
        call = await wait_for_pending_call()
        await eventually(lambda: progress, message="progress while the call waits")
        await sync_to_async(deciding.decide)(call.pk, operator, True)
        result = await asyncio.wait_for(answer, timeout=15)

    assert "waiting for operator approval" in progress
    assert not result.is_error


async def test_it_accepts_the_mcp_param_headers_the_sdk_client_mirrors_from_arguments(mcp_url, secret, demo_server):
    await PolicyRule.objects.acreate(name="reads are fine", action="allow", tool_glob="demo_search_*")

    async with sdk_client(mcp_url, secret) as client:
        await client.list_tools()
        result = await client.call_tool("demo_search_orders", {"status": "shipped", "limit": 2})

    assert not result.is_error, text_of(result)
