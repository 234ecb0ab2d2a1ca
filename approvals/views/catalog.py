"""The catalog of upstream tools across servers, and one tool's page."""

from django.contrib.auth.decorators import login_required
from django.db.models import Q
from django.shortcuts import get_object_or_404, redirect, render

from approvals.display.history import history
from approvals.models import Server, Tool


@login_required
def home(request):
    return redirect("servers")


@login_required
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
    return render(
        request,
        "approvals/catalog.html",
        {
            "active": tools.filter(status=Tool.Status.ACTIVE),
            "rejected": tools.filter(status=Tool.Status.REJECTED),
            "removed": tools.filter(status=Tool.Status.REMOVED) if show_removed else None,
            "removed_count": tools.filter(status=Tool.Status.REMOVED).count(),
            "server": server,
            "servers": Server.objects.all(),
            "query": query,
            "show_removed": show_removed,
        },
    )


@login_required
def tool_detail(request, pk):
    tool = get_object_or_404(Tool.objects.select_related("server"), pk=pk)
    return render(request, "approvals/tool_detail.html", {"tool": tool, "history": history(tool)})
