"""A call as an MCP task: what its client reads of it by polling, in either era, and what it may do to it.

A client that asks for a task (2025-11-25: `params.task` on tools/call; 2026-07-28: the
`io.modelcontextprotocol/tasks` extension) gets the task at once and follows the call by its
id, whatever it waits for: an operator, then the upstream server. The task is the call's row
(`Call.task_id`), so any web process answers its polls and it outlives the process that
received it; calls.task_runner runs it. A task belongs to the token that made it: to any
other, its id names nothing.
"""

import uuid
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction

from approvals.audit import chain
from approvals.audit.chain import SYSTEM, Actor
from approvals.calls import ending, lifecycle
from approvals.calls.models import Call
from approvals.protocol.results import tool_error_result
from approvals.tokens.models import ClientToken

WORKING, COMPLETED, FAILED, CANCELLED = "working", "completed", "failed", "cancelled"
TERMINAL = {COMPLETED, FAILED, CANCELLED}
# How a task's result names the task it answers (2025-11-25).
RELATED_TASK = "io.modelcontextprotocol/related-task"
# What a page of tasks/list holds at most.
LIST_PAGE = 50


def new_task(requested_ttl) -> dict:
    """The task fields of a new call (see lifecycle.receive_call): its id, and the TTL granted.

    The TTL is the client's, within APPROVAL_TIMEOUT_SECONDS, the longest the console holds a call: a call held
    longer than its task would be decided for nobody.
    """
    longest = int(settings.APPROVAL_TIMEOUT_SECONDS * 1000)
    ttl = requested_ttl if isinstance(requested_ttl, int) and not isinstance(requested_ttl, bool) else longest
    return {"task_id": str(uuid.uuid4()), "task_ttl_ms": max(1000, min(ttl, longest))}


@transaction.atomic
def make_task(call: Call) -> Call:
    """Turn a call just held for a decision into a task (2026-07-28, where the console chooses): no process holds
    it any more, and it expires within its task's TTL."""
    fields = new_task(None)
    expires_at = min(call.expires_at, call.received_at + timedelta(milliseconds=fields["task_ttl_ms"]))
    changes = {**fields, "holder": "", "lease_expires_at": None, "expires_at": expires_at}
    # Whatever a decision made of it meanwhile: the task's driver reads the call afresh before anything else.
    Call.objects.filter(pk=call.pk).update(**changes)
    for name, value in changes.items():
        setattr(call, name, value)
    lifecycle.record_task(call)
    return call


def status_of(call: Call) -> str:
    """The task status of a call: working while it waits or runs, then how it ended."""
    if call.status in Call.OPEN:
        return WORKING
    if call.status == Call.Status.CANCELLED:
        return CANCELLED
    if call.status == Call.Status.COMPLETED and not call.is_error:
        return COMPLETED
    # A tool error ends the task as failed, as the spec asks; its result says why.
    return FAILED


def status_message(call: Call) -> str:
    if call.status == Call.Status.PENDING:
        return f"Waiting for an operator to approve the call, until {iso(call.expires_at)}."
    if call.status == Call.Status.APPROVED:
        return "Approved; about to run upstream."
    if call.status == Call.Status.FORWARDED:
        return "Running on the upstream server."
    if call.status == Call.Status.COMPLETED:
        return "The upstream server answered." if not call.is_error else "The upstream server answered with an error."
    return ending.error_text(call)


def iso(moment: datetime | None) -> str | None:
    return moment.isoformat().replace("+00:00", "Z") if moment is not None else None


def last_updated(call: Call) -> datetime:
    moments = (call.received_at, call.decided_at, call.forwarded_at, call.answered_at)
    return max(moment for moment in moments if moment is not None)


def task_fields(call: Call) -> dict:
    """The Task object of 2025-11-25 (tasks/get, tasks/cancel, tasks/list, and in CreateTaskResult)."""
    return {
        "taskId": call.task_id,
        "status": status_of(call),
        "statusMessage": status_message(call),
        "createdAt": iso(call.received_at),
        "lastUpdatedAt": iso(last_updated(call)),
        "ttl": call.task_ttl_ms,
        "pollInterval": settings.TASK_POLL_INTERVAL_MS,
    }


def modern_task_fields(call: Call) -> dict:
    """The task of the 2026-07-28 extension: the same facts, with its result or error once it ended."""
    fields = {
        "taskId": call.task_id,
        "status": status_of(call),
        "statusMessage": status_message(call),
        "createdAt": iso(call.received_at),
        "lastUpdatedAt": iso(last_updated(call)),
        "ttlMs": call.task_ttl_ms,
        "pollIntervalMs": settings.TASK_POLL_INTERVAL_MS,
    }
    if call.ended:
        fields["result"] = result_of(call)
    return fields


def result_of(call: Call) -> dict:
    """What the call answers once ended: the upstream's result, or the tool error saying how it ended."""
    if call.result is not None:
        return call.result
    return tool_error_result(ending.error_text(call))


def find_task(token: ClientToken, task_id) -> Call | None:
    """The task of this id, if this token made it: any other token learns nothing, not even that it exists."""
    if not isinstance(task_id, str) or not task_id:
        return None
    return Call.objects.select_related("tool__server").filter(task_id=task_id, token=token).first()


def list_tasks(token: ClientToken, after: str | None) -> tuple[list[Call], str | None]:
    """The token's tasks, newest first, a page after the task `after`; and the task the next page starts after."""
    tasks = Call.objects.filter(token=token, task_id__isnull=False).order_by("-received_at", "-id")
    if after:
        last = tasks.filter(task_id=after).values_list("received_at", "id").first()
        if last is None:
            return [], None
        tasks = tasks.filter(received_at__lte=last[0]).exclude(received_at=last[0], id__gte=last[1])
    page = list(tasks[: LIST_PAGE + 1])
    more = len(page) > LIST_PAGE
    page = page[:LIST_PAGE]
    return page, (page[-1].task_id if more else None)


CANCELLED_BY_CLIENT = "the client cancelled the task"


def cancel(call: Call, token: ClientToken) -> Call:
    """tasks/cancel: the call is cancelled wherever it is short of its answer; the call as it is now."""
    ending.cancel_running(call.pk, CANCELLED_BY_CLIENT, Actor.client(token))
    return Call.objects.select_related("tool__server").get(pk=call.pk)


def upstream_status(task: dict) -> str:
    """What operators see of the task an upstream server runs a call as (upstream.tasks): its status and message."""
    message = task.get("statusMessage") if isinstance(task.get("statusMessage"), str) else ""
    return f"upstream task {task.get('status')}" + (f": {message}" if message else "")


@transaction.atomic
def note_upstream_task(call_id, task: dict) -> bool:
    """Keep the status of the task the upstream server runs the call as, auditing each change
    (call.upstream_task); whether it changed. A poll that finds it as it was writes nothing."""
    status = task.get("status") if isinstance(task.get("status"), str) else "unknown"
    task_id = task.get("taskId") if isinstance(task.get("taskId"), str) else ""
    changes = {"upstream_task_id": task_id[:200], "upstream_task_status": status[:20]}
    if not Call.objects.filter(pk=call_id).exclude(**changes).update(**changes):
        return False
    message = task.get("statusMessage") if isinstance(task.get("statusMessage"), str) else ""
    data = {"task_id": task_id, "status": status, "message": message[:500]}
    chain.record("call.upstream_task", SYSTEM, call=Call.objects.get(pk=call_id), data=data)
    return True
