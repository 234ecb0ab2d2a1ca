"""Connecting a client: the endpoint, and configuration to paste into each client."""

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.shortcuts import render
from django.views.decorators.cache import never_cache

from approvals.display import snippets
from approvals.views.access import role_required
from approvals.views.tokens import MANAGE_TOKENS, endpoint_url, issue_from_post


# never_cache: after "Create a token for this" the page holds the secret.
@never_cache
@role_required
def connect(request):
    url = endpoint_url(request)
    context = {"endpoint": url, "entered": {"name": "", "tool_globs": "*"}, "errors": [], "secret": None}
    if request.method == "POST":
        if not request.user.has_perm(MANAGE_TOKENS):
            raise PermissionDenied("Only admins create client tokens.")
        token, secret, errors, entered = issue_from_post(request)
        context.update(token=token, secret=secret, errors=errors, entered=entered)
    context["snippets"] = snippets.snippets(url, context["secret"], oauth=settings.OAUTH_SERVER)
    context["oauth"] = settings.OAUTH_SERVER
    return render(request, "approvals/connect.html", context)
