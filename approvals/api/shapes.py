"""Rows as the API shows them (see schemas)."""

from approvals.calls import deciding, lifecycle, tasks
from approvals.calls.models import Call
from approvals.display.timeline import call_timeline
from approvals.inputs import requests
from approvals.inputs.models import InputRequest


def call_summary(call: Call) -> dict:
    return {
        "id": call.pk,
        "status": call.status,
        "tool": call.tool_name,
        "server": call.server.slug if call.server else None,
        "client": call.token.name,
        "received_at": call.received_at,
        "expires_at": call.expires_at,
        "decided_by": call.decided_by_name or None,
        "decided_at": call.decided_at,
        "approvals_needed": call.approvals_needed,
        "task_id": call.task_id,
        "task_status": tasks.status_of(call) if call.task_id else None,
        "upstream_task_status": call.upstream_task_status or None,
    }


def call_detail(call: Call) -> dict:
    return {
        **call_summary(call),
        "arguments": call.arguments,
        "edited_arguments": call.edited_arguments,
        "arguments_digest": call.arguments_digest,
        "tool_digest": call.tool_digest,
        "tool_definition": call.tool.definition if call.tool else None,
        "binding": lifecycle.call_binding(call),
        "rule": call.rule_name,
        "reason": call.reason,
        "approvals": deciding.approvers(call),
        "is_error": call.is_error,
        "error": call.error,
        "result": call.result,
        "timeline": [{"name": s.name, "at": s.at, "detail": s.detail} for s in call_timeline(call)],
        "inputs": [input_summary(request) for request in call.input_requests.select_related("server")],
    }


def input_summary(request: InputRequest) -> dict:
    return {
        "id": request.pk,
        "call_id": request.call_id,
        "method": request.method,
        "mode": request.mode,
        "message": request.message,
        "status": request.status,
        "routed_to": request.routed_to,
        "server": request.server.slug if request.server else None,
        "created_at": request.created_at,
        "expires_at": request.expires_at,
        "answered_by": request.answered_by_name or None,
        "answered_at": request.answered_at,
    }


def input_detail(request: InputRequest) -> dict:
    form = request.method == requests.ELICIT and request.mode == InputRequest.Mode.FORM
    return {
        **input_summary(request),
        "params": request.params,
        "requested_schema": requests.requested_schema(request) if form else None,
        "answer": request.answer if isinstance(request.answer, dict) else None,
    }
