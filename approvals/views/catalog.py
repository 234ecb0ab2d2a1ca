"""The catalog of upstream tools across servers, and one tool's page."""

from dataclasses import dataclass

from django.core.paginator import Paginator
from django.db.models import Q
from django.shortcuts import get_object_or_404, redirect, render

from approvals import roles
from approvals.catalog import review
from approvals.catalog.models import Server, Tool
from approvals.display.history import compare, history
from approvals.forms.fields import whole_number
from approvals.protocol.hidden_text import Mentions, hidden_content
from approvals.views.decorators import role_required

# Rows a list of tools shows at once: a server may list thousands.
PAGE_SIZE = 50


@role_required
def home(request):
    """Where signing in lands without a `next`: each role on the page it works from."""
    if request.user.has_perm(roles.DECIDE_CALLS):
        return redirect("queue")
    if request.user.has_perm("approvals.view_auditevent"):
        return redirect("audit")
    return redirect("catalog")


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
    active = tool_page(request, tools.filter(status=Tool.Status.ACTIVE))
    return render(
        request,
        "approvals/catalog.html",
        {
            "active": active,
            "review": first_rows(tools.filter(status__in=review.DECIDABLE)),
            "rejected": first_rows(tools.filter(status=Tool.Status.REJECTED)),
            "removed": first_rows(tools.filter(status=Tool.Status.REMOVED)) if show_removed else None,
            "removed_count": tools.filter(status=Tool.Status.REMOVED).count(),
            "server": server,
            "servers": Server.objects.all(),
            "query": query,
            "show_removed": show_removed,
        },
    )


def tool_page(request, tools):
    """One page of tools, as `?page=` names it, each flagged for hidden content."""
    page = Paginator(tools, PAGE_SIZE).get_page(request.GET.get("page"))
    flag_hidden_content(page.object_list)
    return page


@dataclass
class FirstRows:
    """The first rows of a list too long for a page, and how many there are in all."""

    rows: list
    count: int

    @property
    def more(self):
        return self.count - len(self.rows)


def first_rows(tools) -> FirstRows:
    rows = list(tools[:PAGE_SIZE])
    return FirstRows(rows, len(rows) if len(rows) < PAGE_SIZE else tools.count())


def flag_hidden_content(tools):
    """Mark each tool with what in its definition hides text; the names of other servers' tools are read once."""
    tools = list(tools)
    if not tools:
        return
    held = list(Tool.objects.filter(status__in=Tool.HELD).values_list("server_id", "exposed_name"))
    mentions = {}
    for tool in tools:
        if tool.server_id not in mentions:
            mentions[tool.server_id] = Mentions(name for server, name in held if server != tool.server_id)
        tool.hidden = hidden_content(tool.definition, mentions[tool.server_id])


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
