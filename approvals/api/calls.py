"""Pending calls and input requests, calls and one call, and the decision on a call."""

from datetime import timedelta

from django.http import HttpRequest
from django.shortcuts import get_object_or_404
from django.utils import timezone
from ninja import Field, Query, Router, Schema
from ninja import Status as Answer

from approvals.api import shapes
from approvals.api.auth import require
from approvals.api.schemas import CallDetail, CallPage, Conflict, Decided, Decision, Error, Invalid, Queue
from approvals.calls import deciding, lifecycle
from approvals.calls.models import Call
from approvals.display import rows
from approvals.display.input_cards import shown_inputs
from approvals.inputs.models import InputRequest
from approvals.roles import DECIDE_CALLS, VIEW_CALLS

router = Router(tags=["calls"])
REFUSED = {401: Error, 403: Error}
MAX_PAGE = 200


class QueueQuery(Schema):
    client: str = ""
    server: str = ""
    tool: str = ""
    min_age: int = Field(0, ge=0, le=10**9, description="Seconds waited at least.")


class CallsQuery(Schema):
    status: list[Call.Status] = []
    client: str = ""
    server: str = ""
    tool: str = ""
    before: int | None = None
    limit: int = 50


def narrowed(rows_, client: str, server: str, tool: str, prefix: str = ""):
    """Rows of calls (or, with prefix "call__", of their input requests) of this client token, server and tool."""
    if client:
        rows_ = rows_.filter(**{f"{prefix}token__name": client})
    if server:
        rows_ = rows_.filter(**{f"{prefix}server__slug": server})
    if tool:
        rows_ = rows_.filter(**{f"{prefix}tool_name": tool})
    return rows_


@router.get("/queue", response={200: Queue, **REFUSED}, summary="Pending calls and input requests, oldest first")
def queue(request: HttpRequest, filters: Query[QueueQuery]):
    """What waits for an operator: `client` is a token's name, `server` a server's slug, `tool` an exposed
    name; `min_age` keeps what has waited at least that many seconds."""
    require(request, VIEW_CALLS)
    received_by = timezone.now() - timedelta(seconds=filters.min_age)
    calls = narrowed(rows.pending_calls(), filters.client, filters.server, filters.tool)
    inputs = shown_inputs().filter(status=InputRequest.Status.PENDING, routed_to=InputRequest.Route.OPERATOR)
    inputs = narrowed(inputs, filters.client, filters.server, filters.tool, prefix="call__")
    return {
        "calls": [shapes.call_summary(c) for c in calls.filter(received_at__lte=received_by)[:MAX_PAGE]],
        "inputs": [
            shapes.input_summary(i)
            for i in inputs.filter(created_at__lte=received_by).order_by("created_at", "pk")[:MAX_PAGE]
        ],
    }


@router.get("/calls", response={200: CallPage, **REFUSED}, summary="Calls, newest first")
def calls(request: HttpRequest, filters: Query[CallsQuery]):
    """Every call whatever its status (repeat `status` to choose), one page at a time: pass the answer's
    `older` as `before` for the next."""
    require(request, VIEW_CALLS)
    found = narrowed(rows.shown_calls(), filters.client, filters.server, filters.tool)
    if filters.status:
        found = found.filter(status__in=filters.status)
    if filters.before is not None:
        found = found.filter(pk__lt=filters.before)
    size = min(max(filters.limit, 1), MAX_PAGE)
    page = list(found.order_by("-pk")[: size + 1])
    older = page[size - 1].pk if len(page) > size else None
    return {"calls": [shapes.call_summary(c) for c in page[:size]], "older": older}


@router.get("/calls/{call_id}", response={200: CallDetail, 404: Error, **REFUSED}, summary="One call")
def call(request: HttpRequest, call_id: int):
    """Its arguments (and an operator's edit), its tool's definition, the binding a decision must send back,
    and its timeline."""
    require(request, VIEW_CALLS)
    return shapes.call_detail(get_object_or_404(rows.shown_calls(), pk=call_id))


@router.post(
    "/calls/{call_id}/decision",
    response={200: Decided, 400: Error, 404: Error, 409: Conflict, 422: Invalid, **REFUSED},
    summary="Approve, deny, or edit then approve a pending call",
)
def decide(request: HttpRequest, call_id: int, decision: Decision):
    """As the queue's buttons: the decision is the user's own in the audit log, quorum and separation of
    duties apply, and the `binding` read with the call must still hold. Of two deciding at once one gets
    200 and the other 409, told who decided first."""
    require(request, DECIDE_CALLS, "Auditors decide nothing: your role does not allow deciding calls.")
    approve = decision.action == "approve"
    if decision.arguments is not None and not approve:
        return Answer(422, {"detail": "Only an approval takes edited arguments.", "errors": []})
    try:
        outcome = deciding.decide(
            call_id,
            request.user,
            approve,
            reason=decision.reason.strip(),
            edited_arguments=decision.arguments,
            shown_binding=decision.binding,
            via="api",
        )
    except Call.DoesNotExist:
        return Answer(404, {"detail": "No such call."})
    call = outcome.row
    if outcome.won:
        return {"message": outcome.message, "call": shapes.call_summary(call)}
    if outcome.errors:
        return Answer(422, {"detail": outcome.message, "errors": [str(e) for e in outcome.errors]})
    if deciding.conflicted(outcome, decision.binding):
        return Answer(409, conflict(call, outcome.message))
    # Neither decided nor changed: this user may not approve it (separation of duties, or approved already).
    return Answer(403, {"detail": outcome.message})


def conflict(call: Call, message: str) -> dict:
    pending = call.status == Call.Status.PENDING
    return {
        "detail": message,
        "status": call.status,
        "decided_by": call.decided_by_name or None,
        "decided_at": call.decided_at,
        "binding": lifecycle.call_binding(call) if pending else None,
    }
