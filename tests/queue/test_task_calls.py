"""A call its client follows as an MCP task: what the audit log, the queue, the call's page and the API say of it."""

from datetime import timedelta

from django.urls import reverse

from approvals import roles
from approvals.api import keys
from approvals.audit.models import AuditEvent
from approvals.calls import lifecycle, tasks
from approvals.calls.models import Call
from approvals.protocol import revisions
from approvals.tokens.context import ClientContext
from tests.fixtures.people import make_user


def task_call(token, tool, ttl_ms=None) -> Call:
    ctx = ClientContext(token, revisions.LEGACY, "2025-11-25")
    arguments = {"order_id": 1012, "amount": 40}
    call, answer = lifecycle.receive_call(ctx, tool, arguments, 1, None, task=tasks.new_task(ttl_ms))
    assert answer is None
    return call


def test_it_records_the_tasks_creation_and_holds_it_no_longer_than_its_ttl(client_token, refund_tool):
    call = task_call(client_token, refund_tool, ttl_ms=30_000)

    created = AuditEvent.objects.get(action="call.task_created", call_id=call.pk)
    assert created.data == {"task_id": call.task_id, "ttl_ms": 30_000}
    assert created.actor_type == "client"
    assert call.expires_at - call.received_at == timedelta(seconds=30)
    # No process holds it: it is polled from any, and no lease of one can lapse under it.
    assert call.holder == "" and call.lease_expires_at is None


def test_it_shows_a_task_in_the_queue_and_on_the_calls_page(client, client_token, refund_tool):
    call = task_call(client_token, refund_tool)
    client.force_login(make_user("olivia", roles.OPERATOR))

    queue = client.get(reverse("queue")).content.decode()
    page = client.get(reverse("call", args=[call.pk])).content.decode()

    assert "data-task" in queue and "followed as a task" in queue
    assert f"<code data-task-id>{call.task_id}</code>" in page
    assert "<span data-task-status>working</span>" in page


def test_it_gives_the_task_id_and_status_in_the_api(client, client_token, refund_tool):
    call = task_call(client_token, refund_tool)
    secret = keys.create_key(make_user("ann", roles.OPERATOR), "ann's bot")[1]

    shown = client.get(f"/api/v1/calls/{call.pk}", headers={"Authorization": f"Bearer {secret}"}).json()

    assert (shown["task_id"], shown["task_status"]) == (call.task_id, "working")


def test_it_keeps_and_shows_the_status_of_the_task_the_upstream_runs_a_call_as(client, client_token, refund_tool):
    call = task_call(client_token, refund_tool)
    task = {"taskId": "up-1", "status": "working", "statusMessage": "Gathering sources..."}

    changes = [tasks.note_upstream_task(call.pk, task), tasks.note_upstream_task(call.pk, task)]
    changes.append(tasks.note_upstream_task(call.pk, {**task, "status": "input_required"}))

    assert changes == [True, False, True]
    noted = AuditEvent.objects.filter(action="call.upstream_task", call_id=call.pk).order_by("seq")
    assert [event.data["status"] for event in noted] == ["working", "input_required"]
    client.force_login(make_user("olivia", roles.OPERATOR))
    page = client.get(reverse("call", args=[call.pk])).content.decode()
    assert "<span data-upstream-task-status>input_required</span>" in page
    secret = keys.create_key(make_user("ann", roles.OPERATOR), "ann's bot")[1]
    shown = client.get(f"/api/v1/calls/{call.pk}", headers={"Authorization": f"Bearer {secret}"}).json()
    assert shown["upstream_task_status"] == "input_required"
