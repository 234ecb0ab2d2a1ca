"""A person's own page: who they are, their roles, and their API keys (made, shown once, revoked)."""

from django.contrib import messages
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from approvals.api import keys
from approvals.roles import ROLES
from approvals.views.access import role_required


@role_required
def account(request):
    secret = None
    if request.method == "POST":
        name = request.POST.get("name", "").strip()
        if not name:
            messages.error(request, "Name the key, to recognise it later.")
            return redirect("account")
        key, secret = keys.create_key(request.user, name)
    context = {
        "roles": [role for role in ROLES if request.user.groups.filter(name=role).exists()],
        "keys": keys.keys_of(request.user),
        "secret": secret,
        "max_name": keys.MAX_NAME,
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
