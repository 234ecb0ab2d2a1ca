"""Input requests in the console: the queue's cards, one request's page, and an operator's answer.

An answer is a plain POST that also works without JavaScript; the websocket
pushes the card's new state to every operator. A form that does not fit the
schema comes back with its errors, checked on the server whatever the browser did.
"""

from datetime import timedelta

from django.conf import settings
from django.contrib import messages
from django.db.models import Q
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from approvals.inputs import requests
from approvals.models import InputRequest
from approvals.roles import DECIDE_CALLS, VIEW_CALLS
from approvals.schema_forms import build_form
from approvals.views.access import permission_or_403
from approvals.views.queue import return_to

INPUT_CARD = "approvals/_input_request.html"


def shown_inputs():
    return InputRequest.objects.select_related("call__token", "call__tool", "server")


def queue_inputs():
    """What the queue shows beside pending calls: open requests, and refusals young enough to still matter."""
    recent = timezone.now() - timedelta(seconds=settings.INPUT_TIMEOUT_SECONDS)
    shown = Q(status=InputRequest.Status.PENDING) | Q(status=InputRequest.Status.REFUSED, created_at__gte=recent)
    return shown_inputs().filter(shown).order_by("created_at", "pk")


def answer_form(request: InputRequest, data=None):
    """The form of fields an elicitation's requestedSchema describes, its defaults filled in."""
    form = build_form(requests.requested_schema(request), data=data, prefix=f"input-{request.pk}")
    form.input_id = request.pk
    return form


@permission_or_403(VIEW_CALLS)
def detail(request, pk):
    input_request = get_object_or_404(shown_inputs(), pk=pk)
    return render(request, "approvals/input_detail.html", {"input": input_request})


@require_POST
@permission_or_403(DECIDE_CALLS)
def answer(request, pk):
    input_request = get_object_or_404(shown_inputs(), pk=pk)
    action, content, form = request.POST.get("action", ""), None, None
    if action == "accept" and input_request.mode == InputRequest.Mode.FORM:
        form = answer_form(input_request, request.POST)
        if not form.is_valid():
            return refused(request, input_request, form, ["Some fields need another look."])
        content = form.to_arguments()
    outcome = requests.answer(pk, request.user, action, content)
    if outcome.errors:
        return refused(request, input_request, form, outcome.errors)
    level = messages.SUCCESS if outcome.won else messages.WARNING
    server = input_request.server.name if input_request.server else "the server"
    messages.add_message(request, level, f"Input request {pk} from {server}: {outcome.message}")
    return redirect(return_to(request))


def refused(request, input_request, form, errors):
    context = {"input": input_request, "bound_form": form, "errors": errors, "next": request.POST.get("next", "")}
    return render(request, "approvals/input_detail.html", context, status=400)
