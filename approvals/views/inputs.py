"""Input requests in the console: one request's page, and an operator's answer.

An answer is a plain POST that also works without JavaScript; the queue's script sends it by fetch and
is answered in JSON, so that the page never leaves for an error page. The websocket pushes the card's new
state to every operator. A form that does not fit the schema comes back with its errors, checked on the
server whatever the browser did.
"""

from django.contrib import messages
from django.http import JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.views.decorators.http import require_POST

from approvals.display.input_cards import answer_form, sampling_media, shown_inputs
from approvals.inputs import requests
from approvals.inputs.models import InputRequest
from approvals.roles import DECIDE_CALLS, VIEW_CALLS
from approvals.views.calls import media_response
from approvals.views.decorators import permission_or_403
from approvals.views.queue import return_to, wants_json


@permission_or_403(VIEW_CALLS)
def detail(request, pk):
    input_request = get_object_or_404(shown_inputs(), pk=pk)
    return render(request, "approvals/input_detail.html", {"input": input_request})


@require_POST
@permission_or_403(DECIDE_CALLS)
def answer(request, pk):
    input_request = get_object_or_404(shown_inputs(), pk=pk)
    action, content, form = request.POST.get("action", ""), None, None
    if input_request.method == requests.SAMPLE:
        content = {"text": request.POST.get("reply", "")}
    elif action == "accept" and input_request.mode == InputRequest.Mode.FORM:
        form = answer_form(input_request, request.POST)
        if not form.is_valid():
            return refused(request, input_request, form, ["Some fields need another look."])
        content = form.to_arguments()
    outcome = requests.answer(pk, request.user, action, content)
    if outcome.errors:
        return refused(request, input_request, form, outcome.errors)
    level = messages.SUCCESS if outcome.won else messages.WARNING
    if wants_json(request):
        # Lost to another answer or the request's end: 409, as a decision that lost is.
        answer = {"input_id": pk, "status": outcome.row.status, "message": outcome.message}
        return JsonResponse({**answer, "level": messages.DEFAULT_TAGS[level]}, status=200 if outcome.won else 409)
    server = input_request.server.name if input_request.server else "the server"
    messages.add_message(request, level, f"Input request {pk} from {server}: {outcome.message}")
    return redirect(return_to(request))


def refused(request, input_request, form, errors):
    """400 with the form as filled in and its errors: the whole page, or for the queue's script the form alone."""
    context = {
        "input": input_request,
        "bound_form": form,
        "errors": errors,
        "next": request.POST.get("next", ""),
        "reply": request.POST.get("reply", ""),
    }
    if wants_json(request):
        form_html = render_to_string("approvals/_input_form.html", context, request=request)
        return JsonResponse({"input_id": input_request.pk, "message": errors[0], "form_html": form_html}, status=400)
    return render(request, "approvals/input_detail.html", context, status=400)


@permission_or_403(VIEW_CALLS)
def media(request, pk, index):
    """An image or audio block of a sampling request, under a media type the console chose."""
    found = sampling_media(get_object_or_404(InputRequest, pk=pk), index)
    return media_response(found, f"input-{pk}-block-{index}.bin")
