"""Input requests: what an upstream server asks for during a call, and the answers it gets.

Like calls/lifecycle.py for calls, each function changes rows, writes their audit events
in the same transaction and announces the change after commit. An answer is a
conditional update (`WHERE status = 'pending'`): of an operator and a client, or
two operators, exactly one answers; the rest are told who did.

inputs/runner.py waits on these rows for the call that asked; the console's pages
answer them through `answer`, and clients through `take_client_answer`.
"""

import secrets
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from approvals.audit import chain
from approvals.audit.chain import SYSTEM, Actor
from approvals.db import transitions
from approvals.inputs.models import InputRequest
from approvals.live import events
from approvals.protocol import sampling
from approvals.protocol.elicitation import content_problems
from approvals.protocol.elicitation_requests import ANSWER_ACTIONS, answer_problems
from approvals.protocol.jsonrpc import INVALID_PARAMS, JsonRpcError

Status = InputRequest.Status
ELICIT = "elicitation/create"
SAMPLE = "sampling/createMessage"
SAMPLING_REJECTED = sampling.REJECTED
MAX_SUMMARY = 10_000
STATUS_OF_ACTION = {"accept": Status.ANSWERED, "decline": Status.DECLINED, "cancel": Status.CANCELLED}


def mode_of(method: str, params: dict) -> str:
    if method != ELICIT:
        return ""
    return InputRequest.Mode.URL if params.get("mode") == "url" else InputRequest.Mode.FORM


def requested_schema(request: InputRequest) -> dict:
    return request.params.get("requestedSchema") or {}


def mint_key(server) -> str:
    """The name the client knows a request by, namespaced by the server asking so it collides with nothing else."""
    return f"{server.slug if server else 'server'}/{secrets.token_hex(8)}"


def summary_of(method: str, params: dict) -> str:
    """What a person reads first: an elicitation's message, or the text a server wants a model to complete."""
    if method == SAMPLE:
        messages = params.get("messages") if isinstance(params.get("messages"), list) else []
        contents = [m.get("content") for m in messages if isinstance(m, dict)]
        blocks = [b for c in contents for b in (c if isinstance(c, list) else [c]) if isinstance(b, dict)]
        return "\n".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")[:MAX_SUMMARY]
    return str(params.get("message", ""))[:MAX_SUMMARY]


def create_request(call, method: str, params: dict, **fields) -> InputRequest:
    return InputRequest.objects.create(
        call=call,
        server_id=call.server_id,
        method=method,
        mode=mode_of(method, params),
        params=params,
        message=summary_of(method, params),
        **fields,
    )


@transaction.atomic
def open_request(call, method: str, params: dict, route: str, client_key: str = "") -> InputRequest:
    request = create_request(
        call,
        method,
        params,
        status=Status.PENDING,
        routed_to=route,
        client_key=client_key,
        expires_at=timezone.now() + timedelta(seconds=settings.INPUT_TIMEOUT_SECONDS),
    )
    data = {"input_id": request.pk, "method": method, "mode": request.mode, "routed_to": route, "params": params}
    chain.record("input.requested", SYSTEM, call=call, data=data)
    if route == InputRequest.Route.CLIENT:
        chain.record("input.passed_through", SYSTEM, call=call, data={"input_id": request.pk, "client_key": client_key})
    events.changed(request, "input.pending")
    return request


@transaction.atomic
def record_unanswered(call, method: str, params: dict, status: str, reason: str) -> InputRequest:
    """A request the console answers at once without asking anyone: one it refuses."""
    request = create_request(
        call,
        method,
        params,
        status=status,
        routed_to=InputRequest.Route.OPERATOR,
        reason=reason,
        answered_at=timezone.now(),
    )
    chain.record(
        f"input.{status}",
        SYSTEM,
        call=call,
        data={"input_id": request.pk, "method": method, "reason": reason, "params": params},
    )
    events.changed(request, f"input.{status}")
    return request


def answer(input_id, user, action: str, content=None) -> transitions.Outcome:
    """An operator's answer; an accepted form's content is checked against the schema first.

    A sampling request is accepted with the reply's text as `content` ({"text": ...}), the operator writing in
    the model's place, or declined.
    """
    request = InputRequest.objects.select_related("call").get(pk=input_id)
    if action not in ANSWER_ACTIONS:
        return transitions.Outcome(False, request, "Answer with accept, decline or cancel.")
    if request.routed_to != InputRequest.Route.OPERATOR:
        return transitions.Outcome(False, request, "This request was passed to the client; it answers it.")
    answering = sampling_answer(action, content, user) if request.method == SAMPLE else None
    result, errors = answering or elicitation_answer(request, action, content)
    if errors:
        return transitions.Outcome(False, request, errors[0], errors[1:])
    changes = {
        "status": STATUS_OF_ACTION[action],
        "answer": result,
        "answered_by": user,
        "answered_by_name": user.get_username(),
        "answered_at": timezone.now(),
    }
    actor, audit = Actor.user(user), {"input.answered": result}
    won, request = transitions.move(
        InputRequest, input_id, [Status.PENDING], changes, actor=actor, audit=audit, event="input.answered"
    )
    if won:
        return transitions.Outcome(
            True, request, {"accept": "Answered.", "decline": "Declined.", "cancel": "Cancelled."}[action]
        )
    return transitions.Outcome(False, request, already_text(request))


def elicitation_answer(request: InputRequest, action: str, content) -> tuple[dict, list[str]]:
    if action != "accept" or request.mode != InputRequest.Mode.FORM:
        return {"action": action}, []
    errors = content_problems(requested_schema(request), content)
    if errors:
        return {}, ["The answer does not fit the form the server asked for.", *errors]
    return {"action": action, "content": content}, []


def sampling_answer(action: str, content, user) -> tuple[dict, list[str]]:
    """The upstream's CreateMessageResult from the operator's text, or MCP's refusal of sampling.

    Refused, the answer is empty and the list holds what the person is told, then why.
    """
    if action == "decline":
        return {"error": sampling.rejection()}, []
    text = content.get("text") if isinstance(content, dict) else None
    if action != "accept":
        return {}, ["A sampling request is answered with a reply or declined.", "Reply or decline."]
    if not isinstance(text, str) or not text.strip():
        return {}, ["The reply was not sent.", "Write the reply the model would give, or decline."]
    return sampling.written_reply(text, user.get_username()), []


def already_text(request: InputRequest) -> str:
    label = request.get_status_display().lower()
    who = f" by {request.answered_by_name}" if request.answered_by_name else ""
    return f"Already {label}{who}."


def take_client_answer(requests, client_answer: dict) -> bool:
    """The client's answer to one of `requests` (a queryset naming it) that it was asked; False when none waits.

    A malformed answer to an elicitation is kept as the error the server will be given instead.
    """
    with transaction.atomic():
        request = (
            requests.filter(status=Status.PENDING, routed_to=InputRequest.Route.CLIENT)
            .select_related("call__token")
            .first()
        )
        if request is None:
            return False
        problems = (
            answer_problems(client_answer, request.mode == InputRequest.Mode.FORM) if request.method == ELICIT else []
        )
        if problems and "error" not in client_answer:
            client_answer = {
                "error": {"code": INVALID_PARAMS, "message": "the client's answer is malformed: " + "; ".join(problems)}
            }
        changes = {"status": Status.PASSED_THROUGH, "answer": client_answer, "answered_at": timezone.now()}
        actor, audit = Actor.client(request.call.token), {"input.answered": client_answer}
        won, _ = transitions.move(
            InputRequest, request.pk, [Status.PENDING], changes, actor=actor, audit=audit, event="input.answered"
        )
    return won


def take_legacy_response(token, session_id: str, response) -> bool:
    """A legacy client's POSTed response to a request the console sent on a call's stream."""
    if not isinstance(response.id, str):
        return False
    client_answer = {"error": response.error.to_dict()} if response.error is not None else response.result
    mine = InputRequest.objects.filter(client_key=response.id, call__token=token, call__session_id=session_id)
    return take_client_answer(mine, client_answer)


def end_request(input_id, status: str, reason: str, actor: Actor = SYSTEM) -> bool:
    """Expire or cancel a request still pending; False when an answer got there first."""
    changes = {"status": status, "reason": reason, "answered_at": timezone.now()}
    audit = {f"input.{status}": {"reason": reason}}
    won, _ = transitions.move(
        InputRequest, input_id, [Status.PENDING], changes, actor=actor, audit=audit, event=f"input.{status}"
    )
    return won


def end_open_requests(call_id, reason: str, actor: Actor = SYSTEM) -> int:
    """Cancel what a call still waits for, as the call itself ends."""
    pending = InputRequest.objects.filter(call_id=call_id, status=Status.PENDING).values_list("pk", flat=True)
    return sum(end_request(pk, Status.CANCELLED, reason, actor) for pk in list(pending))


def expire_stale_requests() -> int:
    """Expire pending requests past their deadline whose waiting handler is gone (a crashed process)."""
    stale = InputRequest.objects.filter(status=Status.PENDING, expires_at__lte=timezone.now()).values_list(
        "pk", flat=True
    )
    return sum(end_request(pk, Status.EXPIRED, expired_reason()) for pk in list(stale))


def expired_reason() -> str:
    return f"nobody answered within {settings.INPUT_TIMEOUT_SECONDS / 60:g} minutes"


def open_for_client(call_id) -> list[InputRequest]:
    """What a call waits for its 2026-07-28 client to answer, oldest first."""
    return list(
        InputRequest.objects.filter(call_id=call_id, status=Status.PENDING, routed_to=InputRequest.Route.CLIENT)
    )


def upstream_reply(request: InputRequest) -> dict:
    """What the upstream server gets for a request that is no longer pending."""
    answered = request.status in (Status.ANSWERED, Status.DECLINED, Status.CANCELLED) and request.answer
    if request.status == Status.PASSED_THROUGH or answered:
        # A refusal (a client's, or an operator's of sampling) is the error the server is given.
        error = request.answer.get("error") if isinstance(request.answer, dict) else None
        if isinstance(error, dict):
            raise JsonRpcError(
                error.get("code", SAMPLING_REJECTED), str(error.get("message", "the client refused")), error.get("data")
            )
        return request.answer
    if request.method == ELICIT:
        # Nobody chose (expired, or the call ended): that is a dismissal, not a refusal.
        return {"action": "decline" if request.status in (Status.REFUSED, Status.DECLINED) else "cancel"}
    raise JsonRpcError(
        SAMPLING_REJECTED, f"{request.method} was not answered: {request.reason or request.get_status_display()}"
    )
