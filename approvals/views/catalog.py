"""The catalog of upstream tools across servers, and one tool's page."""

from django.db.models import Q
from django.shortcuts import get_object_or_404, redirect, render

from approvals.catalog import review
from approvals.catalog.models import Server, Tool
from approvals.display.history import compare, history
from approvals.forms.fields import whole_number
from approvals.protocol.tool_review import hidden_content
from approvals.views.access import role_required


@role_required
def home(request):
    return redirect("servers")


@role_required
def catalog(request):
    tools = Tool.objects.select_related("server")
    server = None
    if request.GET.get("server"):
        server = get_object_or_404(Server, slug=request.GET["server"])
        tools = tools.filter(server=server)
    query = request.GET.get("q", "").strip()
    if query:
        tools = tools.filter(
            Q(exposed_name__icontains=query)
            | Q(upstream_name__icontains=query)
            | Q(definition__title__icontains=query)
            | Q(definition__annotations__title__icontains=query)
            | Q(definition__description__icontains=query)
        )
    show_removed = request.GET.get("removed") == "1"
    active = list(tools.filter(status=Tool.Status.ACTIVE))
    flag_hidden_content(active)
    return render(
        request,
        "approvals/catalog.html",
        {
            "active": active,
            "review": tools.filter(status__in=review.DECIDABLE),
            "rejected": tools.filter(status=Tool.Status.REJECTED),
            "removed": tools.filter(status=Tool.Status.REMOVED) if show_removed else None,
            "removed_count": tools.filter(status=Tool.Status.REMOVED).count(),
            "server": server,
            "servers": Server.objects.all(),
            "query": query,
            "show_removed": show_removed,
        },
    )


def flag_hidden_content(tools):
    """Mark each tool with what in its definition hides text; the names of other servers' tools are read once."""
    held = list(Tool.objects.filter(status__in=Tool.HELD).values_list("server_id", "exposed_name"))
    for tool in tools:
        tool.hidden = hidden_content(tool.definition, [name for server, name in held if server != tool.server_id])


@role_required
def tool_detail(request, pk):
    tool = get_object_or_404(Tool.objects.select_related("server"), pk=pk)
    versions = history(tool)
    older, newer = whole_number(request.GET.get("from")), whole_number(request.GET.get("to"))
    if older is not None and newer is not None:
        comparison = compare(tool, older, newer)
    else:
        # By default the newest version against the last one that differs from it.
        newest = versions[0].change if versions else None
        older = next((v.change for v in versions[1:] if v.change.digest != newest.digest), None)
        comparison = compare(tool, older.pk, newest.pk) if older else None
    flag_hidden_content([tool])
    return render(
        request,
        "approvals/tool_detail.html",
        {"tool": tool, "history": versions, "comparison": comparison},
    )
