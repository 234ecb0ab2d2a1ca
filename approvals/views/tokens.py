"""Client tokens: the list (every role reads it), and for admins a new token, its details, a rotation, revoking one.

A secret appears only on the response page to the POST that made it.
"""

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.db.models import Max
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.cache import never_cache

from approvals.actions import revocation
from approvals.catalog import routes
from approvals.display import snippets
from approvals.tokens import changes, issuing, quotas
from approvals.tokens.models import ClientToken
from approvals.views.decorators import permission_or_403

MANAGE_TOKENS = "approvals.manage_tokens"
VIEW_TOKENS = "approvals.view_clienttoken"
DETAILS = ("owner", "description", "expires", "rate_per_minute", "max_pending_calls")
# The grace periods the rotate page offers for the old secret, in the words parse_duration reads.
GRACE_CHOICES = [("0", "none: refuse it at once"), ("1h", "1 hour"), ("24h", "24 hours"), ("7d", "7 days")]
# Each form field's element and label, for the summary's links to the field at fault.
FIELDS = {
    "name": ("token-name", "Name"),
    "tool_globs": ("token-globs", "Tools"),
    "owner": ("token-owner", "Owner"),
    "description": ("token-description", "Description"),
    "expires": ("token-expires", "Expires"),
    "rate_per_minute": ("token-rate", "Requests a minute"),
    "max_pending_calls": ("token-cap", "Calls waiting at once"),
}


def endpoint_url(request):
    return request.build_absolute_uri(reverse("mcp_endpoint"))


def entered_details(request, defaults=None) -> dict:
    return {field: request.POST.get(field, (defaults or {}).get(field, "")) for field in DETAILS}


def issue_from_post(request, defaults=None):
    """(token, secret, problems, entered) for a POSTed name, tool patterns and details, `defaults` for those not sent;
    `problems` is the TokenError that refused the token, or None."""
    entered = {
        "name": request.POST.get("name", "").strip(),
        "tool_globs": request.POST.get("tool_globs", ""),
        **entered_details(request, defaults),
    }
    try:
        details = issuing.parse_details(*(entered[field] for field in DETAILS))
        token, secret = issuing.issue(
            entered["name"], issuing.parse_globs(entered["tool_globs"]), request.user, **details
        )
    except issuing.TokenError as exc:
        return None, None, exc, entered
    return token, secret, None, entered


def global_limits() -> dict:
    """What a token without limits of its own gets, for pages to say."""
    return {"rate": quotas.rate_per_minute(ClientToken()), "cap": quotas.pending_cap(None)}


def problems_context(problems: issuing.TokenError | None) -> dict:
    """Every fault for the summary at the top of the form, linked to its field where it has one, and each field's own
    for the field to show."""
    if problems is None:
        return {"errors": [], "field_errors": {}}
    linked = {error for errors in problems.fields.values() for error in errors}
    errors = [{"text": error} for error in problems.errors if error not in linked] + [
        {"text": error, "anchor": FIELDS[field][0], "label": FIELDS[field][1]}
        for field, errors in problems.fields.items()
        for error in errors
    ]
    return {"errors": errors, "field_errors": problems.fields}


def form_context(entered: dict, problems: issuing.TokenError | None) -> dict:
    return {
        "entered": entered,
        **problems_context(problems),
        "users": get_user_model().objects.filter(is_active=True).order_by("username"),
        "defaults": global_limits(),
    }


def secret_page(request, token, secret, title):
    return render(
        request,
        "approvals/token_created.html",
        {
            "title": title,
            "token": token,
            "secret": secret,
            "reachable": routes.reachable_tools(token.tool_globs),
            "endpoint": endpoint_url(request),
            "snippets": snippets.snippets(endpoint_url(request), secret),
        },
    )


@permission_or_403(VIEW_TOKENS)
def token_list(request):
    tokens = ClientToken.objects.select_related(
        "created_by", "owner", "oauth_grant__application", "oauth_grant__granted_by"
    ).annotate(old_secret_until=Max("retired_secrets__valid_until"))
    return render(
        request,
        "approvals/token_list.html",
        {
            "tokens": tokens,
            "now": timezone.now(),
            "can_manage": request.user.has_perm(MANAGE_TOKENS),
            "defaults": global_limits(),
        },
    )


# never_cache: the response to a successful POST holds the secret, and no browser or proxy may keep it.
@never_cache
@permission_or_403(MANAGE_TOKENS)
def token_add(request):
    entered, problems = {"name": "", "tool_globs": "*", **dict.fromkeys(DETAILS, "")}, None
    if request.method == "POST":
        token, secret, problems, entered = issue_from_post(request)
        if token is not None:
            return secret_page(request, token, secret, f"Created {token.name}")
    return render(request, "approvals/token_form.html", form_context(entered, problems))


def shown_expiry(token: ClientToken) -> str:
    return timezone.localtime(token.expires_at).date().isoformat() if token.expires_at else ""


def details_of(token: ClientToken) -> dict:
    return {
        "tool_globs": "\n".join(token.tool_globs),
        "owner": token.owner.get_username() if token.owner else "",
        "description": token.description,
        "expires": shown_expiry(token),
        "rate_per_minute": "" if token.rate_per_minute is None else str(token.rate_per_minute),
        "max_pending_calls": "" if token.max_pending_calls is None else str(token.max_pending_calls),
    }


def changes_from_post(request, token: ClientToken) -> dict:
    """The token's new details from the form; an expiry left as shown keeps its time of day."""
    entered = entered_details(request)
    expiry_kept = entered["expires"].strip() == shown_expiry(token)
    details = issuing.parse_details(*("" if expiry_kept and f == "expires" else entered[f] for f in DETAILS))
    if expiry_kept:
        details["expires_at"] = token.expires_at
    globs = issuing.parse_globs(request.POST.get("tool_globs", ""))
    problems = issuing.glob_problems(globs)
    if problems:
        raise issuing.TokenError.by_field({"tool_globs": problems})
    return {**details, "tool_globs": globs}


@permission_or_403(MANAGE_TOKENS)
def token_edit(request, pk):
    token = get_object_or_404(ClientToken.objects.select_related("owner"), pk=pk)
    entered, problems = details_of(token), None
    if request.method == "POST" and not token.revoked:
        entered = {**entered_details(request), "tool_globs": request.POST.get("tool_globs", "")}
        try:
            changed = changes.change_token(token, changes_from_post(request, token), request.user)
        except issuing.TokenError as exc:
            problems = exc
        else:
            messages.success(request, f"Saved {token.name}." if changed else f"Nothing changed in {token.name}.")
            return redirect("tokens")
    return render(request, "approvals/token_edit.html", {**form_context(entered, problems), "token": token})


@never_cache
@permission_or_403(MANAGE_TOKENS)
def token_rotate(request, pk):
    token = get_object_or_404(ClientToken, pk=pk)
    errors = []
    if request.method == "POST" and not token.revoked:
        grace = request.POST.get("grace", "0")
        if grace not in dict(GRACE_CHOICES):
            errors = ["choose one of the grace periods offered"]
        else:
            secret = changes.rotate_token(token, issuing.parse_duration(grace), request.user)
            if secret is not None:
                token.refresh_from_db()
                return secret_page(request, token, secret, f"Rotated {token.name}")
            errors = [f"{token.name} has no secret to rotate"]
    context = {"token": token, "verb": "Rotate", "choices": GRACE_CHOICES, "errors": errors}
    return render(request, "approvals/token_rotate.html", context)


@permission_or_403(VIEW_TOKENS)
def token_revoke(request, pk):
    """Admins revoke any token; anyone revokes a token they own, such as the grant they allowed a client."""
    token = get_object_or_404(ClientToken, pk=pk)
    if not (request.user.has_perm(MANAGE_TOKENS) or token.owner_id == request.user.pk):
        raise PermissionDenied("Only admins, and a token's owner, revoke client tokens.")
    if request.method == "POST":
        if revocation.revoke_token(token, request.user):
            messages.success(
                request,
                f"Revoked {token.name}: clients using it are refused from now on, and its waiting calls are cancelled.",
            )
        else:
            messages.info(request, f"{token.name} was revoked already.")
        return redirect("tokens")
    return render(request, "approvals/token_revoke.html", {"token": token, "verb": "Revoke"})
