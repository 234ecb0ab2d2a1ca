"""The console as an OAuth client of upstream servers: Connect on a server's page, the callback the
authorization server sends the browser back to, and the console's published Client ID Metadata Document."""

from django.contrib import messages
from django.http import JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from approvals.catalog import sync
from approvals.catalog.models import Server
from approvals.upstream import UpstreamError
from approvals.upstream_oauth import server_tokens
from approvals.upstream_oauth.connecting import ConnectError, binding, console_url, finish_connect, start_connect
from approvals.upstream_oauth.models import UpstreamAuthorization
from approvals.upstream_oauth.registering import client_metadata_document
from approvals.views.decorators import admin_required
from approvals.views.leaving import leave_for

# The session's flows, as connecting.binding gives them: the latest few, each good for minutes.
FLOWS_KEY = "upstream_oauth_flows"
FLOWS_KEPT = 8


def leave_to_authorize(request, url: str, purpose: str):
    """Sends the browser to an authorization URL, its session keeping the flow, which only it may finish."""
    request.session[FLOWS_KEY] = [*request.session.get(FLOWS_KEY, []), binding(url)][-FLOWS_KEPT:]
    return leave_for(request, url, purpose)


@admin_required
@require_POST
def server_connect(request, slug):
    """The shared connection: an admin's browser goes to the server's authorization endpoint. On a per-person
    server there is none to make, and the admin connects their own account, through which its lists are read."""
    server = get_object_or_404(Server, slug=slug)
    if server.oauth == Server.OAuth.CLIENT_CREDENTIALS:
        return client_credentials_again(request, server)
    own = request.user if server.connection == Server.Connection.PER_PERSON else None
    try:
        url = start_connect(server, base_url=console_url(request), user=own, started_by=request.user)
    except ConnectError as exc:
        messages.error(request, f"Could not connect {server.name}: {exc}")
        return redirect("server", slug=server.slug)
    return leave_to_authorize(request, url, f"The console connects to {server.name} through its authorization server.")


def client_credentials_again(request, server):
    """A machine-to-machine server needs no browser: a new token, then a sync, says whether it works now."""
    try:
        server_tokens.client_credentials(server, anew=True)
    except UpstreamError as exc:
        messages.error(request, f"Could not connect {server.name}: {exc.message}")
        return redirect("server", slug=server.slug)
    report = sync.sync_server(server)
    if report.ok:
        messages.success(request, f"Connected {server.name} with its client credentials; {report.summary()}.")
    else:
        messages.error(request, f"{server.name} has a token, but the sync failed: {report.error}")
    return redirect("server", slug=server.slug)


@require_GET
def callback(request):
    """Where the authorization server sends the browser back: the flow its `state` names, if this browser's (see
    connecting)."""
    query = request.GET
    by = request.user if request.user.is_authenticated else None
    try:
        flow = finish_connect(
            query.get("state", ""),
            query.get("code", ""),
            query.get("iss"),
            query.get("error", ""),
            by=by,
            bindings=request.session.get(FLOWS_KEY, []),
        )
    except ConnectError as exc:
        return render(request, "approvals/upstream_connected.html", {"problem": str(exc)}, status=400)
    server, report = flow.server, None
    if flow.outcome == UpstreamAuthorization.CONNECTED and server.enabled:
        report = sync.sync_server(server)
    status = 200 if flow.outcome == UpstreamAuthorization.CONNECTED else 400
    context = {"server": server, "flow": flow, "report": report, "problem": "" if status == 200 else flow.outcome}
    return render(request, "approvals/upstream_connected.html", context, status=status)


@require_GET
def client_metadata(request):
    """The console's Client ID Metadata Document: its URL is the console's client_id where servers accept it."""
    return JsonResponse(client_metadata_document(console_url(request)))
