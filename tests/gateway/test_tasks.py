"""A held call as an MCP task (2025-11-25): the client gets the task at once and collects the outcome by polling."""

import time

from approvals.audit.models import AuditEvent
from approvals.calls import deciding
from approvals.calls.models import Call
from approvals.gateway.tasks import EXTENSION
from approvals.policy.models import PolicyRule
from approvals.protocol.headers import request_headers
from approvals.tokens.credentials import create_token
from tests.fixtures.gateway import MODERN, modern_envelope
from tests.gateway.conftest import Raw

CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"

JSON_ONLY = {"Accept": "application/json"}
LOOKUP = {"name": "demo_lookup_customer", "arguments": {"customer_id": "C007"}}


def result_of(response) -> dict:
    body = response.json()
    assert "result" in body, body
    return body["result"]


def create_task(raw, session_id, ttl=None) -> dict:
    task = {} if ttl is None else {"ttl": ttl}
    return result_of(raw.legacy(session_id, "tools/call", **LOOKUP, task=task))["task"]


def poll_until(raw, session_id, task_id, statuses, timeout=15.0) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        task = result_of(raw.legacy(session_id, "tasks/get", taskId=task_id))
        if task["status"] in statuses or time.monotonic() > deadline:
            return task
        time.sleep(0.1)


def test_it_says_it_runs_tool_calls_as_tasks_and_lists_tools_as_able_to(raw, demo_server):
    response = raw.post(
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        }
    )
    session_id = response.headers["Mcp-Session-Id"]

    assert result_of(response)["capabilities"]["tasks"]["requests"] == {"tools": {"call": {}}}
    tools = result_of(raw.legacy(session_id, "tools/list"))["tools"]
    lookup = next(tool for tool in tools if tool["name"] == "demo_lookup_customer")
    assert lookup["execution"] == {"taskSupport": "optional"}


def test_it_answers_a_held_call_with_a_working_task_and_then_the_approved_result(raw, demo_server, operator):
    session_id = raw.initialize()

    task = create_task(raw, session_id)

    call = Call.objects.get()
    assert call.status == Call.Status.PENDING
    assert (task["taskId"], task["status"]) == (call.task_id, "working")
    assert "operator" in task["statusMessage"] and call.expires_at.isoformat()[:19] in task["statusMessage"]
    assert call.holder == "" and call.lease_expires_at is None
    assert poll_until(raw, session_id, task["taskId"], {"completed"}, timeout=0.5)["status"] == "working"

    deciding.decide(call.pk, operator, True)
    done = poll_until(raw, session_id, task["taskId"], {"completed", "failed"})

    assert done["status"] == "completed", done
    answer = result_of(raw.legacy(session_id, "tasks/result", headers=JSON_ONLY, taskId=task["taskId"]))
    assert "C007" in answer["content"][0]["text"]
    assert answer["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task["taskId"]}
    assert Call.objects.get().status == Call.Status.COMPLETED


def test_it_fails_a_denied_task_with_the_operators_reason(raw, demo_server, operator):
    session_id = raw.initialize()
    task = create_task(raw, session_id)

    deciding.decide(Call.objects.get().pk, operator, False, reason="not on a Sunday")

    done = poll_until(raw, session_id, task["taskId"], {"failed"})
    assert done["status"] == "failed" and "not on a Sunday" in done["statusMessage"]
    answer = result_of(raw.legacy(session_id, "tasks/result", headers=JSON_ONLY, taskId=task["taskId"]))
    assert answer["isError"] and "not on a Sunday" in answer["content"][0]["text"]


def test_it_expires_a_task_at_its_ttl_and_holds_no_call_longer_than_the_approval_timeout(raw, demo_server, settings):
    session_id = raw.initialize()

    task = create_task(raw, session_id, ttl=1000)
    longest = create_task(raw, session_id, ttl=10**9)

    assert task["ttl"] == 1000
    assert longest["ttl"] == settings.APPROVAL_TIMEOUT_SECONDS * 1000
    done = poll_until(raw, session_id, task["taskId"], {"failed"}, timeout=10)
    assert done["status"] == "failed" and "no operator decided" in done["statusMessage"]
    assert Call.objects.get(task_id=task["taskId"]).status == Call.Status.EXPIRED


def test_it_knows_no_task_of_another_token(raw, demo_server, mcp_url):
    task = create_task(raw, raw.initialize())
    other = Raw(mcp_url, create_token("another client")[1])
    other_session = other.initialize()

    for method in ("tasks/get", "tasks/result", "tasks/cancel"):
        error = other.legacy(other_session, method, headers=JSON_ONLY, taskId=task["taskId"]).json()["error"]
        assert error["code"] == -32602 and "Unknown task" in error["message"]
    assert result_of(other.legacy(other_session, "tasks/list"))["tasks"] == []
    assert Call.objects.get().status == Call.Status.PENDING
    other.client.close()


def test_it_cancels_the_held_call_when_its_task_is_cancelled(raw, demo_server):
    session_id = raw.initialize()
    task = create_task(raw, session_id)

    cancelled = result_of(raw.legacy(session_id, "tasks/cancel", taskId=task["taskId"]))

    assert cancelled["status"] == "cancelled"
    call = Call.objects.get()
    assert call.status == Call.Status.CANCELLED
    assert not Call.objects.filter(status=Call.Status.PENDING).exists()
    assert AuditEvent.objects.filter(action="call.cancelled", call_id=call.pk).exists()
    error = raw.legacy(session_id, "tasks/cancel", taskId=task["taskId"]).json()["error"]
    assert error["code"] == -32602


def test_it_lists_a_tokens_tasks_newest_first(raw, demo_server):
    session_id = raw.initialize()
    first, second = create_task(raw, session_id), create_task(raw, session_id)

    listed = result_of(raw.legacy(session_id, "tasks/list"))["tasks"]

    assert [task["taskId"] for task in listed] == [second["taskId"], first["taskId"]]


def modern_with_tasks(raw, method, **params):
    """A 2026-07-28 request from a client that declared the tasks extension."""
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": modern_envelope(**params)}
    body["params"]["_meta"][CAPABILITIES] = {"extensions": {EXTENSION: {}}}
    routing = request_headers(MODERN, method, params)
    if method == "tools/call":
        routing["Mcp-Name"] = params["name"]
    return raw.post(body, {**routing, **JSON_ONLY})


def test_it_answers_a_modern_clients_held_call_with_a_task_carrying_the_result_once_approved(
    raw, demo_server, operator
):
    task = result_of(modern_with_tasks(raw, "tools/call", **LOOKUP))

    call = Call.objects.get()
    assert task["resultType"] == "task" and task["status"] == "working"
    assert task["taskId"] == call.task_id and "operator" in task["statusMessage"]
    assert call.holder == ""
    deciding.decide(call.pk, operator, True)
    deadline = time.monotonic() + 15
    while (got := result_of(modern_with_tasks(raw, "tasks/get", taskId=task["taskId"])))["status"] == "working":
        assert time.monotonic() < deadline
        time.sleep(0.1)

    assert got["status"] == "completed" and "C007" in got["result"]["content"][0]["text"]


def test_it_answers_an_allowed_call_at_once_to_a_modern_client_that_takes_tasks(raw, demo_server):
    PolicyRule.objects.create(name="reads", action="allow", tool_glob="demo_lookup_*")

    answer = result_of(modern_with_tasks(raw, "tools/call", **LOOKUP))

    assert answer["resultType"] == "complete" and "C007" in answer["content"][0]["text"]


def test_it_cancels_a_modern_task_and_refuses_tasks_to_a_client_without_the_extension(raw, demo_server):
    task = result_of(modern_with_tasks(raw, "tools/call", **LOOKUP))

    refused = raw.modern("tasks/get", taskId=task["taskId"], headers=JSON_ONLY).json()["error"]
    cancelled = result_of(modern_with_tasks(raw, "tasks/cancel", taskId=task["taskId"]))

    assert refused["code"] == -32021
    assert cancelled["status"] == "cancelled" and Call.objects.get().status == Call.Status.CANCELLED
    assert modern_with_tasks(raw, "tasks/update", taskId=task["taskId"]).json()["error"]["code"] == -32602


def test_it_keeps_a_task_past_the_end_of_its_session_for_the_clients_next_one(raw, demo_server):
    session_id = raw.initialize()
    task = create_task(raw, session_id)

    raw.client.delete(raw.url, headers={**raw.headers, "Mcp-Session-Id": session_id})
    polled = result_of(raw.legacy(raw.initialize(), "tasks/get", taskId=task["taskId"]))

    assert polled["status"] == "working"
    assert Call.objects.get().status == Call.Status.PENDING
