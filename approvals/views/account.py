"""A person's own page: who they are, their roles, their API keys (made, shown once, revoked), their own
connections to the servers that take one per person (connected through the server's authorization server,
forgotten), and the devices that notify them of waiting calls (views/devices)."""

from datetime import timedelta

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from approvals.api import keys
from approvals.push import devices, vapid
from approvals.roles import ROLES, can_decide
from approvals.slack import transport as slack_transport
from approvals.upstream_oauth import connections
from approvals.upstream_oauth.connecting import ConnectError, console_url, start_connect
from approvals.views import upstream_oauth
from approvals.views.decorators import role_required

# How long a new key may last, in days; none lasts until revoked.
KEY_EXPIRY_CHOICES = [("", "never"), ("30", "in 30 days"), ("90", "in 90 days"), ("365", "in a year")]
KEY_EXPIRIES = {value: int(value) for value, _ in KEY_EXPIRY_CHOICES if value}


@role_required
def account(request):
    secret = None
    if request.method == "POST":
        name = request.POST.get("name", "").strip()
        if not name:
            messages.error(request, "Name the key, to recognise it later.")
            return redirect("account")
        days = KEY_EXPIRIES.get(request.POST.get("expires", ""))
        expires_at = timezone.now() + timedelta(days=days) if days else None
        key, secret = keys.create_key(request.user, name, expires_at, request.POST.get("read_only") == "on")
    context = {
        "roles": [role for role in ROLES if request.user.groups.filter(name=role).exists()],
        "keys": keys.keys_of(request.user),
        "secret": secret,
        "max_name": keys.MAX_NAME,
        "expiries": KEY_EXPIRY_CHOICES,
        "connections": connections.connections_of(request.user),
        "slack_on": slack_transport.configured(),
        "slack_links": request.user.slack_links.all(),
        "push_devices": devices.devices_of(request.user) if can_decide(request.user) else None,
        "vapid_key": vapid.public_key(),
    }
    return render(request, "approvals/account.html", context)


@require_POST
@role_required
def revoke(request, pk):
    if keys.revoke_key(request.user, pk):
        messages.success(request, "The key is revoked: the API refuses it from now on.")
    else:
        messages.warning(request, "No such key of yours, or it was revoked already.")
    return redirect("account")


@require_POST
@role_required
def connect(request, slug):
    """Sends the person's browser to the server's authorization server; the console's callback brings it back."""
    server = get_object_or_404(connections.per_person_servers(), slug=slug)
    try:
        url = start_connect(server, base_url=console_url(request), user=request.user, started_by=request.user)
    except ConnectError as exc:
        messages.error(request, f"Could not connect to {server.name}: {exc}")
        return redirect("account")
    purpose = f"You connect your own account at {server.name} through its authorization server."
    return upstream_oauth.leave_to_authorize(request, url, purpose)


@require_POST
@role_required
def disconnect(request, slug):
    server = get_object_or_404(connections.per_person_servers(), slug=slug)
    if connections.disconnect(server, request.user):
        forgotten = f"Your connection to {server.name} is forgotten: your calls to it fail until you connect again."
        messages.success(request, forgotten)
    return redirect("account")
