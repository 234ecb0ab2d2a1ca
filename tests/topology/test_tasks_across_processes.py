"""A task outlives the web process that created it: another process answers its polls and runs it once approved."""

import time

import pytest

from approvals import demo
from approvals.actions import servers
from approvals.calls import deciding
from approvals.calls.models import Call
from approvals.catalog import sync
from approvals.tokens.credentials import create_token
from tests.fixtures.people import make_user
from tests.fixtures.processes import web_process
from tests.fixtures.servers import free_port, serving_pid
from tests.gateway.conftest import Raw

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
JSON_ONLY = {"Accept": "application/json"}


def test_it_runs_a_task_approved_after_its_process_stopped_when_another_process_is_polled():
    operator = make_user("ann", superuser=True)
    _, secret = create_token("agent")
    server = servers.add_server(
        name="Demo", transport="stdio", command=demo.COMMAND_LINE, accept_tools=True, schedule_sync=False
    )
    assert sync.sync_server(server).ok
    first, second = free_port(), free_port()

    with web_process(first):
        client = Raw(f"http://127.0.0.1:{first}/mcp", secret)
        session_id = client.initialize()
        arguments = {"customer_id": "C007"}
        created = client.legacy(session_id, "tools/call", name="demo_lookup_customer", arguments=arguments, task={})
        task_id = created.json()["result"]["task"]["taskId"]
        client.client.close()
    assert Call.objects.get().status == Call.Status.PENDING

    deciding.decide(Call.objects.get().pk, operator, True)

    with web_process(second) as polled:
        worker = serving_pid(polled)
        client = Raw(f"http://127.0.0.1:{second}/mcp", secret)
        deadline = time.monotonic() + 30
        while (task := client.legacy(session_id, "tasks/get", taskId=task_id).json()["result"])["status"] == "working":
            assert time.monotonic() < deadline, task
            time.sleep(0.2)
        answer = client.legacy(session_id, "tasks/result", headers=JSON_ONLY, taskId=task_id).json()["result"]
        client.client.close()

    assert task["status"] == "completed", task
    assert "C007" in answer["content"][0]["text"]
    call = Call.objects.get()
    # Run by the process that answered the polls, the first being gone.
    assert call.status == Call.Status.COMPLETED and call.holder.endswith(f":{worker}")
