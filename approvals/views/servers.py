"""Upstream servers: the list, one server's page, and the admin's actions on it."""

from django.contrib import messages
from django.db.models import Count, Q
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from approvals.actions import servers
from approvals.audit.chain import Actor
from approvals.catalog import surface_sync, sync
from approvals.catalog.forms import ServerForm
from approvals.catalog.models import Server, Tool
from approvals.catalog.specs import stdio_isolation
from approvals.upstream import probe
from approvals.views.catalog import first_rows, tool_page
from approvals.views.decorators import admin_required, role_required

# Longer instructions start folded, so that the tools stay in view.
FOLD_INSTRUCTIONS_AT = 600


@role_required
def server_list(request):
    listed = Server.objects.annotate(
        active_count=Count("tools", filter=Q(tools__status=Tool.Status.ACTIVE)),
        rejected_count=Count("tools", filter=Q(tools__status=Tool.Status.REJECTED)),
    )
    return render(request, "approvals/server_list.html", {"servers": listed})


@role_required
def server_detail(request, slug):
    server = get_object_or_404(Server, slug=slug)
    listed = server.tools.select_related("server")
    others = [status for status in Tool.Status.values if status != Tool.Status.ACTIVE]
    tools = {status: first_rows(listed.filter(status=status)) for status in others}
    tools[Tool.Status.ACTIVE] = tool_page(request, listed.filter(status=Tool.Status.ACTIVE))
    return render(
        request,
        "approvals/server_detail.html",
        {
            "server": server,
            "tools": tools,
            "surface": surface_sync.listed_by_kind(server),
            "isolation": probe.describe(stdio_isolation(), server.command_argv())
            if server.transport == Server.Transport.STDIO
            else "",
            "fold_instructions": len(server.instructions) > FOLD_INSTRUCTIONS_AT
            or server.instructions.count("\n") > 12,
        },
    )


@admin_required
def server_add(request):
    form = ServerForm(request.POST if request.method == "POST" else None)
    if form.is_bound and form.is_valid():
        server = servers.add_server(**form.changes(), actor=Actor.user(request.user))
        messages.success(request, f"Added {server.name}.")
        return redirect("server", slug=server.slug)
    return render(request, "approvals/server_form.html", {"form": form})


@admin_required
def server_edit(request, slug):
    server = get_object_or_404(Server, slug=slug)
    form = ServerForm(request.POST if request.method == "POST" else None, server=server)
    if form.is_bound and form.is_valid():
        servers.update_server(server, actor=Actor.user(request.user), **form.changes())
        messages.success(request, f"Saved {server.name}.")
        return redirect("server", slug=server.slug)
    return render(request, "approvals/server_form.html", {"form": form, "server": server})


@require_POST
@admin_required
def server_test(request, slug):
    server = get_object_or_404(Server, slug=slug)
    identity, count, error = sync.test_connection(server)
    if error:
        messages.error(request, f"Could not reach {server.name}: {error}")
    else:
        messages.success(request, f"Reached {server.name}: {count} tools listed, revision {identity.revision}.")
    return redirect("server", slug=server.slug)


@require_POST
@admin_required
def server_sync(request, slug):
    server = get_object_or_404(Server, slug=slug)
    if not server.enabled:
        messages.warning(request, f"{server.name} is disabled: enable it before syncing.")
        return redirect("server", slug=server.slug)
    report = sync.sync_server(server)
    if report.ok:
        server.refresh_from_db()
        messages.success(
            request,
            f"Synced {report.summary()}; {server.active_tools().count()} active tools, revision {server.revision}.",
        )
    else:
        messages.error(request, f"Could not sync {server.name}: {report.error}")
    return redirect("server", slug=server.slug)
