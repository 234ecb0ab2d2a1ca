"""approval_prompt: Claude Code's --permission-prompt-tool, called with the official SDK client in both eras."""

import asyncio
import json

import pytest
from asgiref.sync import sync_to_async

from approvals import roles
from approvals.audit.models import AuditEvent
from approvals.calls import deciding
from approvals.calls.models import Call
from approvals.policy.models import PolicyRule
from approvals.tokens.credentials import create_token
from tests.fixtures.calls import wait_for_pending_call
from tests.fixtures.gateway import sdk_client
from tests.fixtures.people import make_user
from tests.gateway.test_sdk_clients import both_eras, text_of

PROMPT = "approval_prompt"
BASH = {"tool_name": "Bash", "input": {"command": "ls -la /tmp", "description": "List /tmp"}, "tool_use_id": "toolu_1"}


def decision_of(result) -> dict:
    assert not result.is_error, text_of(result)
    return json.loads(text_of(result))


@both_eras
async def test_it_lists_approval_prompt_to_a_token_allowed_to_use_it(mcp_url, secret, mode):
    async with sdk_client(mcp_url, secret, mode) as client:
        listed = await client.list_tools()

    prompt = next(tool for tool in listed.tools if tool.name == PROMPT)
    assert prompt.input_schema["required"] == ["tool_name", "input"]


@both_eras
async def test_it_neither_lists_nor_runs_approval_prompt_for_a_token_not_allowed_it(
    mcp_url, transactional_db, mode, demo_server
):
    _, scoped = await sync_to_async(create_token)("scoped agent", ["demo_*"])

    async with sdk_client(mcp_url, scoped, mode) as client:
        listed = await client.list_tools()
        with pytest.raises(Exception, match=f"Unknown tool: {PROMPT}"):
            await client.call_tool(PROMPT, BASH)

    names = {tool.name for tool in listed.tools}
    assert PROMPT not in names and "demo_lookup_customer" in names
    assert not await Call.objects.aexists()


@both_eras
async def test_it_answers_allow_with_the_input_an_operator_edited(mcp_url, secret, operator, mode):
    async with sdk_client(mcp_url, secret, mode) as client:
        asking = asyncio.ensure_future(client.call_tool(PROMPT, BASH))
        call = await wait_for_pending_call()
        assert call.kind == Call.Kind.PERMISSION and call.tool_name == "Bash"
        edited = {"command": "ls /tmp", "description": "List /tmp"}
        outcome = await sync_to_async(deciding.decide)(call.pk, operator, True, edited_arguments=edited)
        assert outcome.won, outcome.message
        result = await asyncio.wait_for(asking, 10)

    assert decision_of(result) == {"behavior": "allow", "updatedInput": edited}
    call = await Call.objects.aget()
    assert call.status == Call.Status.COMPLETED and call.decided_by_name == "olivia"
    actions = [a async for a in AuditEvent.objects.filter(call_id=call.pk).values_list("action", flat=True)]
    assert actions == [
        "call.received",
        "call.policy",
        "call.pending",
        "call.edited",
        "call.approved",
        "call.completed",
    ]


@both_eras
async def test_it_answers_deny_with_the_operators_message(mcp_url, secret, operator, mode):
    async with sdk_client(mcp_url, secret, mode) as client:
        asking = asyncio.ensure_future(client.call_tool(PROMPT, BASH))
        call = await wait_for_pending_call()
        await sync_to_async(deciding.decide)(call.pk, operator, False, reason="use the project's own scripts")
        result = await asyncio.wait_for(asking, 10)

    assert decision_of(result) == {"behavior": "deny", "message": "use the project's own scripts"}


@both_eras
async def test_a_deny_rule_answers_at_once_with_its_message(mcp_url, secret, mode):
    await PolicyRule.objects.acreate(
        name="no rm -rf",
        action="deny",
        applies_to="permission",
        tool_glob="Bash",
        conditions=[{"path": "command", "op": "contains", "value": "rm -rf"}],
        message="Recursive deletes are not allowed here.",
    )
    dangerous = {"tool_name": "Bash", "input": {"command": "rm -rf build/", "description": "Clean"}}

    async with sdk_client(mcp_url, secret, mode) as client:
        result = await asyncio.wait_for(client.call_tool(PROMPT, dangerous), 10)

    assert decision_of(result) == {"behavior": "deny", "message": "Recursive deletes are not allowed here."}
    call = await Call.objects.aget()
    assert call.status == Call.Status.DENIED and call.rule_name == "no rm -rf"


async def test_an_allow_rule_answers_the_input_unchanged_and_rules_for_tools_do_not_apply(mcp_url, secret):
    await PolicyRule.objects.acreate(name="deny every tool call", action="deny", tool_glob="*")
    await PolicyRule.objects.acreate(name="reads", action="allow", applies_to="permission", tool_glob="Read")
    read = {"tool_name": "Read", "input": {"file_path": "/src/app.py"}}

    async with sdk_client(mcp_url, secret) as client:
        result = await asyncio.wait_for(client.call_tool(PROMPT, read), 10)

    assert decision_of(result) == {"behavior": "allow", "updatedInput": {"file_path": "/src/app.py"}}
    call = await Call.objects.aget()
    assert call.status == Call.Status.COMPLETED and call.rule_name == "reads"


async def test_it_tells_the_agent_what_to_fix_in_malformed_arguments(mcp_url, secret):
    async with sdk_client(mcp_url, secret) as client:
        result = await client.call_tool(PROMPT, {"tool_name": "Bash", "input": "ls"})

    assert result.is_error
    assert "'input' must be an object" in text_of(result)
    assert not await Call.objects.aexists()


async def test_a_rule_asking_two_operators_and_not_the_tokens_owner_holds_it_until_both_approve(mcp_url):
    owner, ann, bob = [await sync_to_async(make_user)(name, roles.OPERATOR) for name in ("owner", "ann", "bob")]
    _, secret = await sync_to_async(create_token)("owned agent", user=owner, owner=owner)
    await PolicyRule.objects.acreate(
        name="two for shell",
        action="ask",
        applies_to="permission",
        tool_glob="Bash",
        approvals_needed=2,
        separation_of_duties="require",
    )

    async with sdk_client(mcp_url, secret) as client:
        asking = asyncio.ensure_future(client.call_tool(PROMPT, BASH))
        call = await wait_for_pending_call()
        refused = await sync_to_async(deciding.decide)(call.pk, owner, True)
        first = await sync_to_async(deciding.decide)(call.pk, ann, True)
        assert not asking.done()
        second = await sync_to_async(deciding.decide)(call.pk, bob, True)
        result = await asyncio.wait_for(asking, 10)

    assert not refused.won and "separation of duties" in refused.message
    assert first.won and (await Call.objects.aget()).approvals_needed == 2
    assert second.won
    assert decision_of(result) == {"behavior": "allow", "updatedInput": BASH["input"]}


async def test_a_request_nobody_decides_in_time_is_denied_saying_so(mcp_url, secret):
    await PolicyRule.objects.acreate(
        name="quick", action="ask", applies_to="permission", tool_glob="*", approval_timeout_seconds=1
    )

    async with sdk_client(mcp_url, secret) as client:
        result = await asyncio.wait_for(client.call_tool(PROMPT, BASH), 15)

    decision = decision_of(result)
    assert decision["behavior"] == "deny"
    assert "no operator decided within 1 seconds" in decision["message"]
    assert (await Call.objects.aget()).status == Call.Status.EXPIRED
