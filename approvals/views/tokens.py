"""Client tokens: the list, a new token (its secret shown on the response page only), revoking one."""

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache

from approvals.display import snippets
from approvals.models import ClientToken
from approvals.tokens import credentials, issuing
from approvals.views.access import permission_or_403

MANAGE_TOKENS = "approvals.manage_tokens"


def endpoint_url(request):
    return request.build_absolute_uri(reverse("mcp_endpoint"))


def issue_from_post(request):
    """(token, secret, errors, entered) for a POSTed name and tool patterns."""
    entered = {"name": request.POST.get("name", "").strip(), "tool_globs": request.POST.get("tool_globs", "")}
    try:
        token, secret = issuing.issue(entered["name"], issuing.parse_globs(entered["tool_globs"]), request.user)
    except issuing.TokenError as exc:
        return None, None, exc.errors, entered
    return token, secret, [], entered


@permission_or_403(MANAGE_TOKENS)
def token_list(request):
    return render(request, "approvals/token_list.html", {"tokens": ClientToken.objects.select_related("created_by")})


# never_cache: the response to a successful POST holds the secret, and no browser or proxy may keep it.
@never_cache
@permission_or_403(MANAGE_TOKENS)
def token_add(request):
    entered, errors = {"name": "", "tool_globs": "*"}, []
    if request.method == "POST":
        token, secret, errors, entered = issue_from_post(request)
        if token is not None:
            return render(
                request,
                "approvals/token_created.html",
                {
                    "token": token,
                    "secret": secret,
                    "reachable": issuing.reachable_tools(token.tool_globs),
                    "endpoint": endpoint_url(request),
                    "snippets": snippets.snippets(endpoint_url(request), secret),
                },
            )
    return render(request, "approvals/token_form.html", {"entered": entered, "errors": errors})


@permission_or_403(MANAGE_TOKENS)
def token_revoke(request, pk):
    token = get_object_or_404(ClientToken, pk=pk)
    if request.method == "POST":
        if credentials.revoke_token(token, request.user):
            messages.success(request, f"Revoked {token.name}: clients using it are refused from now on.")
        else:
            messages.info(request, f"{token.name} was revoked already.")
        return redirect("tokens")
    return render(request, "approvals/token_revoke.html", {"token": token})
