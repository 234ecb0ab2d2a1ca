"""Connecting a client: the endpoint, and configuration to paste into each client."""

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.shortcuts import render
from django.views.decorators.cache import never_cache

from approvals.display import snippets
from approvals.views.decorators import role_required
from approvals.views.tokens import MANAGE_TOKENS, endpoint_url, issue_from_post, problems_context

# A token made in passing, to try a client, lapses unless someone chose otherwise.
DEFAULT_EXPIRY = "30d"
EXPIRIES = [("7d", "in 7 days"), ("30d", "in 30 days"), ("90d", "in 90 days"), ("", "never")]


# never_cache: after "Create a token for this" the page holds the secret.
@never_cache
@role_required
def connect(request):
    url = endpoint_url(request)
    entered = {"name": "", "tool_globs": "*", "expires": DEFAULT_EXPIRY}
    context = {"endpoint": url, "entered": entered, "secret": None, "expiries": EXPIRIES, **problems_context(None)}
    if request.method == "POST":
        if not request.user.has_perm(MANAGE_TOKENS):
            raise PermissionDenied("Only admins create client tokens.")
        token, secret, problems, entered = issue_from_post(request, {"expires": DEFAULT_EXPIRY})
        context.update(token=token, secret=secret, entered=entered, **problems_context(problems))
    context["snippets"] = snippets.snippets(url, context["secret"], oauth=settings.OAUTH_SERVER)
    context["oauth"] = settings.OAUTH_SERVER
    return render(request, "approvals/connect.html", context)
