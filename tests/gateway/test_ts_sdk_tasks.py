"""The official TypeScript SDK's client (tests/node/task-client.mjs) following a held call as a task.

Each request of the client times out after CLIENT_TIMEOUT_MS, as the SDK's 60 s default would after a minute;
the operator decides after HOLD_SECONDS, past it.
"""

import asyncio
import json
import time

import pytest
from asgiref.sync import sync_to_async

from approvals.calls import deciding
from approvals.calls.models import Call
from approvals.policy.models import PolicyRule
from tests.fixtures.calls import wait_for_pending_call
from tests.fixtures.servers import NODE_DIR, node_env, require_everything
from tests.fixtures.waiting import eventually

CLIENT_TIMEOUT_MS = 1500
HOLD_SECONDS = 2
LOOKUP = ("demo_lookup_customer", {"customer_id": "C007"})


async def start_client(mcp_url, secret, mode, call=LOOKUP) -> asyncio.subprocess.Process:
    """The TypeScript client making `call` (a tool's name and arguments) in `mode` (see task-client.mjs)."""
    node = require_everything()
    name, arguments = call
    return await asyncio.create_subprocess_exec(
        node,
        str(NODE_DIR / "task-client.mjs"),
        mcp_url,
        secret,
        name,
        json.dumps(arguments),
        str(CLIENT_TIMEOUT_MS),
        mode,
        cwd=str(NODE_DIR),
        env={**node_env(), "PATH": "/usr/bin:/bin"},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


async def finished(client: asyncio.subprocess.Process) -> list[dict]:
    try:
        async with asyncio.timeout(30):
            out, err = await client.communicate()
    except TimeoutError:
        client.kill()
        await client.wait()
        pytest.fail("the TypeScript client did not finish")
    assert client.returncode == 0, err.decode()
    return [json.loads(line) for line in out.decode().splitlines()]


def of_type(lines: list[dict], kind: str) -> list[dict]:
    return [line for line in lines if line["type"] == kind]


def text_of(result: dict) -> str:
    return " ".join(block["text"] for block in result["content"] if block["type"] == "text")


async def decide_after_the_clients_timeout(operator, approve: bool, reason=""):
    call = await wait_for_pending_call()
    await asyncio.sleep(HOLD_SECONDS)
    await sync_to_async(deciding.decide)(call.pk, operator, approve, reason)
    return call


async def test_it_gives_the_result_approved_after_the_clients_request_timeout(mcp_url, secret, demo_server, operator):
    started = time.monotonic()
    client = await start_client(mcp_url, secret, "task")

    call = await decide_after_the_clients_timeout(operator, True)
    lines = await finished(client)

    assert time.monotonic() - started > HOLD_SECONDS > CLIENT_TIMEOUT_MS / 1000
    created = of_type(lines, "taskCreated")[0]["task"]
    assert created["status"] == "working" and "operator" in created["statusMessage"]
    assert not of_type(lines, "error"), lines
    assert "C007" in text_of(of_type(lines, "result")[0]["result"])
    call = await Call.objects.aget(pk=call.pk)
    assert (call.task_id, call.status) == (created["taskId"], Call.Status.COMPLETED)


async def test_it_loses_the_same_held_call_made_without_a_task(mcp_url, secret, demo_server, operator):
    client = await start_client(mcp_url, secret, "plain")

    call = await wait_for_pending_call()
    lines = await finished(client)

    assert "timed out" in of_type(lines, "error")[0]["message"].lower()
    # The client hung up as it gave up; the console hears the cut and cancels the call a moment after.
    await eventually(
        lambda: Call.objects.filter(pk=call.pk, status=Call.Status.CANCELLED).aexists(), message="the call cancelled"
    )


async def test_it_tells_the_client_of_a_denial_with_the_reason(mcp_url, secret, demo_server, operator):
    client = await start_client(mcp_url, secret, "task")

    await decide_after_the_clients_timeout(operator, False, "not before the audit")
    lines = await finished(client)

    failed = [line["task"] for line in of_type(lines, "taskStatus") if line["task"]["status"] == "failed"]
    assert "not before the audit" in failed[0]["statusMessage"]
    result = of_type(lines, "failedResult")[0]["result"]
    assert result["isError"] and "not before the audit" in text_of(result)


async def test_it_tells_the_client_of_an_expiry(mcp_url, secret, demo_server):
    await PolicyRule.objects.acreate(name="brief", action="ask", tool_glob="demo_*", approval_timeout_seconds=2)
    client = await start_client(mcp_url, secret, "task")

    lines = await finished(client)

    result = of_type(lines, "failedResult")[0]["result"]
    assert result["isError"] and "no operator decided within 2 seconds" in text_of(result)
    assert (await Call.objects.aget()).status == Call.Status.EXPIRED


async def test_it_cancels_the_held_call_with_its_task(mcp_url, secret, demo_server):
    client = await start_client(mcp_url, secret, "cancel")

    lines = await finished(client)

    assert of_type(lines, "cancelled")[0]["task"]["status"] == "cancelled"
    call = await Call.objects.aget()
    assert call.status == Call.Status.CANCELLED and call.reason == "the client cancelled the task"
    assert not await Call.objects.filter(status=Call.Status.PENDING).aexists()
