"""One input request, and an operator's answer to it."""

from django.http import HttpRequest
from django.shortcuts import get_object_or_404
from ninja import Router
from ninja import Status as Answer

from approvals.api import shapes
from approvals.api.auth import require
from approvals.api.schemas import Answer as AnswerBody
from approvals.api.schemas import Answered, Conflict, Error, InputDetail, Invalid
from approvals.display.input_cards import shown_inputs
from approvals.inputs import requests
from approvals.inputs.models import InputRequest
from approvals.roles import DECIDE_CALLS, VIEW_CALLS

router = Router(tags=["input requests"])
REFUSED = {401: Error, 403: Error}


@router.get("/inputs/{input_id}", response={200: InputDetail, 404: Error, **REFUSED}, summary="One input request")
def input_request(request: HttpRequest, input_id: int):
    """What the server asks, and for a form the schema its answer must fit."""
    require(request, VIEW_CALLS)
    return shapes.input_detail(get_object_or_404(shown_inputs(), pk=input_id))


@router.post(
    "/inputs/{input_id}/answer",
    response={200: Answered, 400: Error, 404: Error, 409: Conflict, 422: Invalid, **REFUSED},
    summary="Accept (with a form's content), decline or cancel an input request",
)
def answer(request: HttpRequest, input_id: int, body: AnswerBody):
    """A form's `content` is checked against its requested schema (422 with the problems). Someone who
    answered first, or a request passed to its client, is a 409."""
    require(request, DECIDE_CALLS, "Auditors answer nothing: your role does not allow answering input requests.")
    get_object_or_404(InputRequest, pk=input_id)
    outcome = requests.answer(input_id, request.user, body.action, body.content)
    row = outcome.row
    if outcome.won:
        return {"message": outcome.message, "input": shapes.input_summary(row)}
    if outcome.errors:
        return Answer(422, {"detail": outcome.message, "errors": [str(e) for e in outcome.errors]})
    return Answer(
        409,
        {
            "detail": outcome.message,
            "status": row.status,
            "decided_by": row.answered_by_name or None,
            "decided_at": row.answered_at,
            "binding": None,
        },
    )
