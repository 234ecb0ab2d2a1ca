"""A person's own page: who they are, their roles, and their API keys (made, shown once, revoked)."""

from datetime import timedelta

from django.contrib import messages
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from approvals.api import keys
from approvals.roles import ROLES
from approvals.views.access import role_required

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
