"""Tool review: what needs review, one tool's review, and the admins' accept and reject."""

from itertools import groupby

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from approvals.audit.chain import Actor
from approvals.catalog import review
from approvals.models import Server, Tool
from approvals.views.access import admin_required, role_required

MAX_NOTE = 500


@role_required
def review_list(request):
    pending = list(review.needs_review().order_by("server__name", "exposed_name"))
    groups = []
    for server, tools in groupby(pending, key=lambda tool: tool.server):
        others = review.other_tool_names(server.pk)
        groups.append({"server": server, "tools": [review.review_of(tool, others) for tool in tools]})
    declined = Tool.objects.select_related("server").filter(status=Tool.Status.DECLINED)
    return render(request, "approvals/review_list.html", {"groups": groups, "declined": declined})


@role_required
def tool_review(request, pk):
    tool = get_object_or_404(Tool.objects.select_related("server"), pk=pk)
    return render(request, "approvals/tool_review.html", {"tool": tool, "review": review.review_of(tool)})


def note_of(request) -> str:
    return request.POST.get("note", "").strip()[:MAX_NOTE]


def report(request, outcome):
    (messages.success if outcome.done else messages.error)(request, outcome.message[:1].upper() + outcome.message[1:])


@require_POST
@admin_required
def tool_decide(request, pk, accept: bool):
    """Accept or reject the definition the page showed, named by its digest."""
    tool = get_object_or_404(Tool, pk=pk)
    decide = review.accept if accept else review.reject
    report(request, decide(tool.pk, Actor.user(request.user), note_of(request), request.POST.get("digest", "")))
    return redirect("tool_review", pk=tool.pk)


@require_POST
@admin_required
def server_accept_tools(request, slug):
    """Accept several tools of one server at once, each as the digest the page showed."""
    server = get_object_or_404(Server, slug=slug)
    picked = dict(value.partition(":")[::2] for value in request.POST.getlist("tools"))
    tools = review.needs_review(server).filter(pk__in=[pk for pk in picked if pk.isdigit()])
    if not tools:
        messages.warning(request, "Select the tools to accept.")
    for tool in tools:
        report(request, review.accept(tool.pk, Actor.user(request.user), note_of(request), picked[str(tool.pk)]))
    return redirect("review")
