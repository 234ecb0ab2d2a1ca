"""The queue of pending calls, and the decisions taken on it.

Decisions are plain POSTs. The page's script asks for JSON and shows what
went wrong in the row, whose new state the websocket pushes anyway; without the
script the browser follows a redirect to a page that says what happened.
"""

from urllib.parse import urlencode

from django.contrib import messages
from django.http import Http404, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.defaultfilters import pluralize
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from approvals.actions import notify
from approvals.calls import bulk, deciding, taking
from approvals.calls.forms import ArgumentsEditor, BulkDecisionForm, DecisionForm
from approvals.calls.models import Call
from approvals.display import rows
from approvals.display.queue import QueueFilter, filter_choices, queue_page
from approvals.push import devices
from approvals.roles import DECIDE_CALLS, VIEW_CALLS
from approvals.views.decorators import live_page, permission_or_403


@permission_or_403(VIEW_CALLS)
@live_page
def queue(request):
    chosen = QueueFilter.from_query(request.GET)
    page = queue_page(chosen, request.GET.get("page"))
    context = {
        "page": page,
        "choices": filter_choices(),
        "live_query": urlencode({"view": "queue", **chosen.params()}),
    }
    return render(request, "approvals/queue.html", context)


@require_POST
@permission_or_403(DECIDE_CALLS)
def bulk_decide(request):
    form = BulkDecisionForm(request.POST)
    if not form.is_valid():
        messages.error(request, form.problem())
        return redirect(return_to(request))
    done = bulk.decide_selected(form.selection, request.user, form.approves, form.cleaned_data["reason"].strip())
    if done.refused:
        messages.error(request, done.refused)
        return redirect(return_to(request))
    if done.decided:
        verb = "Approved" if form.approves else "Denied"
        messages.success(request, f"{verb} {done.decided} call{pluralize(done.decided)}.")
    for outcome in done.waiting():
        messages.info(request, f"Call {outcome.row.pk} ({outcome.row.tool_name}): {outcome.message}")
    for outcome in done.lost():
        messages.warning(request, f"Call {outcome.row.pk} ({outcome.row.tool_name}): {outcome.message}")
    if done.missing:
        messages.warning(request, f"No such call: {', '.join(map(str, done.missing))}.")
    return redirect(return_to(request))


@require_POST
@permission_or_403(DECIDE_CALLS)
def decide(request, pk):
    form = DecisionForm(request.POST)
    if not form.is_valid():
        return respond(request, get_object_or_404(Call, pk=pk), form.problem(), messages.ERROR, status=400)
    data = form.cleaned_data
    try:
        outcome = deciding.decide(
            pk,
            request.user,
            form.approves,
            reason=data["reason"].strip(),
            shown_binding=data["binding"],
            **origin(request),
        )
    except Call.DoesNotExist:
        raise Http404("No such call.") from None
    if deciding.conflicted(outcome, data["binding"]):
        return refuse(request, outcome.row, outcome.message)
    return respond(request, outcome.row, outcome.message, messages.SUCCESS if outcome.won else messages.WARNING)


def origin(request) -> dict:
    """Where a decision came from, when not the queue: a page a notification opened names the person's own device
    (in the decision's form, or in the edit page's address, to which its form posts)."""
    label = devices.label_of(request.user, request.POST.get(notify.MARKER) or request.GET.get(notify.MARKER))
    return {"via": "push", "device": label} if label is not None else {}


def refuse(request, call, message):
    """409: the call was decided or ended first, or is not the call the page showed; nothing was recorded.

    The page's script shows the message on the call's panel; without it the browser shows it on a page of its own.
    """
    if wants_json(request):
        return respond(request, call, message, messages.WARNING, status=409)
    context = {"call": call, "message": message, "back": return_to(request)}
    return render(request, "approvals/decision_refused.html", context, status=409)


def wants_json(request) -> bool:
    return request.accepts("application/json") and not request.accepts("text/html")


def claiming(change):
    """A POST that takes a call or gives it back, answered as a decision is."""

    @require_POST
    @permission_or_403(DECIDE_CALLS)
    def view(request, pk):
        try:
            outcome = change(pk, request.user)
        except Call.DoesNotExist:
            raise Http404("No such call.") from None
        return respond(request, outcome.call, outcome.message, messages.SUCCESS if outcome.won else messages.WARNING)

    view.__name__ = change.__name__
    return view


claim = claiming(taking.claim_call)
release = claiming(taking.release_claim)


def respond(request, call, message, level, status=200):
    if wants_json(request):
        tag = messages.DEFAULT_TAGS[level]
        return JsonResponse(
            {"call_id": call.pk, "status": call.status, "message": message, "level": tag}, status=status
        )
    messages.add_message(request, level, f"Call {call.pk} ({call.tool_name}): {message}")
    return redirect(return_to(request))


def return_to(request):
    target = request.POST.get("next", "")
    # A path of this site only: redirect() would take anything else without a slash for a view's name.
    if target.startswith("/") and url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return target
    return reverse("queue")


@permission_or_403(DECIDE_CALLS)
def edit(request, pk):
    call = get_object_or_404(rows.shown_calls(), pk=pk)
    refusal = deciding.already_text(call) if call.status != Call.Status.PENDING else ""
    refusal = refusal or deciding.approval_refusal(call, request.user)
    refusal = refusal or ("" if call.editable else deciding.NOT_EDITABLE)
    if refusal:
        messages.warning(request, f"Call {call.pk} ({call.tool_name}): {refusal}")
        return redirect("queue")
    editor = ArgumentsEditor(call, request.POST if request.method == "POST" else None)
    if request.method == "POST" and editor.is_valid():
        outcome = deciding.decide(
            pk,
            request.user,
            True,
            reason=editor.reason.strip(),
            edited_arguments=editor.edited_arguments(),
            shown_binding=editor.binding,
            **origin(request),
        )
        if deciding.conflicted(outcome, editor.binding):
            return refuse(request, outcome.row, outcome.message)
        if outcome.errors:
            editor.refuse(outcome.errors)
        else:
            level = messages.SUCCESS if outcome.won else messages.WARNING
            decided = outcome.won and outcome.row.status != Call.Status.PENDING
            edited = " with edited arguments" if decided and outcome.row.edited_arguments is not None else ""
            messages.add_message(
                request, level, f"Call {call.pk} ({call.tool_name}): {outcome.message.rstrip('.')}{edited}."
            )
            return redirect("queue")
    status = 400 if request.method == "POST" else 200
    return render(request, "approvals/call_edit.html", {"call": call, "editor": editor}, status=status)
