"""The console's OAuth 2.1 authorization server for /mcp: its discovery documents and the consent page.

django-oauth-toolkit issues the codes and tokens (PKCE S256, rotating refresh tokens, RFC 8707 resources,
RFC 9207 `iss`); this module adds the page where a person allows a client, and what MCP clients discover.
"""

import json
from functools import wraps
from urllib.parse import urlencode, urlsplit

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.http import Http404, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_safe
from oauth2_provider.exceptions import OAuthToolkitError
from oauth2_provider.models import get_application_model
from oauth2_provider.settings import oauth2_settings
from oauth2_provider.views import (
    DynamicClientRegistrationManagementView,
    DynamicClientRegistrationView,
    OAuthServerMetadataView,
    TokenView,
)
from oauth2_provider.views.base import BaseAuthorizationView
from oauthlib.oauth2.rfc6749.errors import CustomOAuth2Error

from approvals.catalog import routes
from approvals.gateway import auth
from approvals.middleware import POLICY
from approvals.oauth import consent_limits, consent_tokens, registrations, scopes
from approvals.oauth.validator import code_claims
from approvals.policy.shadowing import glob_covers
from approvals.signin import clients
from approvals.tokens import issuing

REGISTRATIONS_PER_MINUTE = 20


def oauth_server_on(view):
    """A view of the authorization server, which does not exist while OAUTH_SERVER is off."""

    @wraps(view)
    def checked(request, *args, **kwargs):
        if not settings.OAUTH_SERVER:
            raise Http404("this console's OAuth authorization server is off")
        return view(request, *args, **kwargs)

    return checked


def resource_url(request) -> str:
    return request.build_absolute_uri(reverse("mcp_endpoint"))


def issuer(request) -> str:
    return oauth2_settings.oauth2_authorization_server_issuer(request)


def may_grant(user) -> bool:
    return user.is_superuser or user.groups.filter(name__in=settings.OAUTH_GRANT_ROLES).exists()


@never_cache
@require_safe
def server_metadata(request):
    """RFC 8414 metadata, also served as OpenID-style discovery, with what MCP clients look for."""
    response = OAuthServerMetadataView.as_view()(request)
    data = json.loads(response.content)
    data.update(
        issuer=issuer(request),
        scopes_supported=[scopes.EVERY_TOOL],
        code_challenge_methods_supported=["S256"],
        client_id_metadata_document_supported=True,
    )
    response.content = json.dumps(data)
    return response


class Consent(BaseAuthorizationView):
    """GET shows what the client asks; POST with allow or deny answers it, back at the client's redirect URI."""

    def handle_no_permission(self):
        return redirect_to_login(self.request.get_full_path())

    def get(self, request, *args, **kwargs):
        return self.answer(request, None)

    def post(self, request, *args, **kwargs):
        return self.answer(request, request.POST.get("decision"))

    def answer(self, request, decision):
        try:
            asked, credentials = self.validate_authorization_request(request)
        except OAuthToolkitError as error:
            return self.refuse(error, None)
        application = get_application_model().objects.get(client_id=credentials["client_id"])
        resource = request.GET.getlist("resource") or [resource_url(request)]
        if resource != [resource_url(request)]:
            return self.refuse(target_error(request, credentials, resource), application)
        allowed = consent_limits.role_globs(request.user) if may_grant(request.user) else []
        if not allowed:
            return self.refused_person(application)
        wanted = scopes.globs_of(asked)
        granted = narrowed(wanted, allowed)
        if not granted:
            return self.refuse(scope_error(credentials, wanted, allowed), application)
        asked = [scopes.PREFIX + glob for glob in granted]
        context = {
            "client": consent_tokens.client_name(application),
            "client_id": application.client_id,
            "source": application.registration_source,
            "redirect_uri": credentials["redirect_uri"],
            "globs": granted,
            "narrowed": granted != wanted,
            "reachable": routes.reachable_tools(granted),
            "choices": expiry_choices(),
            "chosen": request.POST.get("expiry", f"{consent_limits.preferred_days()}d"),
            "errors": [],
        }
        if decision in ("allow", "deny"):
            try:
                expires_at = parse_choice(context["chosen"])
            except issuing.TokenError as exc:
                context["errors"] = exc.errors
            else:
                if decision == "deny":
                    consent_tokens.note_denial(request.user, application, credentials["redirect_uri"], " ".join(asked))
                credentials.update(resource=resource, claims=code_claims(expires_at))
                return self.respond(request, asked, credentials, application, decision == "allow")
        response = render(request, "approvals/oauth_consent.html", context)
        # The answer is a redirect to the client, which a form's CSP must name (Chromium enforces form-action there).
        origin = "{0.scheme}://{0.netloc}".format(urlsplit(credentials["redirect_uri"]))
        response["Content-Security-Policy"] = POLICY.replace("form-action 'self'", f"form-action 'self' {origin}")
        return response

    def refused_person(self, application):
        if may_grant(self.request.user):
            reason = "An admin sets which tools each role may let a client use; yours may let it use none."
        else:
            reason = (
                "An admin decides which roles may allow OAuth clients (OAUTH_GRANT_ROLES); yours is not among them."
            )
        context = {"client": consent_tokens.client_name(application), "reason": reason}
        return render(self.request, "approvals/oauth_refused.html", context, status=403)

    def respond(self, request, asked, credentials, application, allow):
        try:
            uri, *_ = self.create_authorization_response(request, " ".join(asked), credentials, allow)
        except OAuthToolkitError as error:
            return self.refuse(error, application, decided=True)
        return self.redirect(uri, application)

    def refuse(self, error, application, decided=False):
        """An error goes back to the client, with `iss` (RFC 9207), once the person has decided, or when an admin
        registered the client; else this page says it (RFC 9700 §4.11.2): a client that registered itself would
        have the console send a signed-in person, unasked, to any address it chose."""
        redirect, response = self.error_response_parts(error)
        if redirect and (decided or registrations.by_admin(self.request.GET.get("client_id", ""))):
            return self.redirect(f"{response['url']}&{urlencode({'iss': issuer(self.request)})}", application)
        context = {"error": response["error"].error, "description": response["error"].description, "kept": redirect}
        return render(self.request, "approvals/oauth_error.html", context, status=response["error"].status_code)

    def error_response_parts(self, error):
        # OAuthLibMixin's (redirect?, parts); BaseAuthorizationView's own renders through a template mixin this lacks.
        return super(BaseAuthorizationView, self).error_response(error)


def target_error(request, credentials, resource) -> OAuthToolkitError:
    error = CustomOAuth2Error(
        error="invalid_target",
        description=f"this console grants access to {resource_url(request)} only, not {' '.join(resource)}",
        state=credentials.get("state"),
    )
    return OAuthToolkitError(error=error, redirect_uri=credentials["redirect_uri"])


def narrowed(wanted: list[str], allowed: list[str]) -> list[str]:
    """The part of the tools a client asks for that the person's role may grant (RFC 6749 §3.3 lets the server
    grant less than asked): each pattern the role covers, and the role's own patterns a broader one covers."""
    granted = []
    for glob in wanted:
        if any(glob_covers(mine, glob) for mine in allowed):
            granted.append(glob)
        else:
            granted.extend(mine for mine in allowed if glob_covers(glob, mine))
    return list(dict.fromkeys(granted))


def scope_error(credentials, wanted: list[str], allowed: list[str]) -> OAuthToolkitError:
    error = CustomOAuth2Error(
        error="invalid_scope",
        description=f"the person asked may grant {' '.join(scopes.PREFIX + glob for glob in allowed)} only, "
        f"none of {' '.join(scopes.PREFIX + glob for glob in wanted)}",
        state=credentials.get("state"),
    )
    return OAuthToolkitError(error=error, redirect_uri=credentials["redirect_uri"])


def expiry_choices() -> list[tuple[str, str]]:
    """The expiries the consent page offers, in the words parse_expiry reads."""
    return [(f"{days}d", f"{days} day{'s' if days != 1 else ''}") for days in consent_limits.expiry_days()]


def parse_choice(chosen: str):
    if chosen not in dict(expiry_choices()):
        raise issuing.TokenError(["choose one of the expiries offered"])
    return issuing.parse_expiry(chosen, timezone.now())


consent = oauth_server_on(never_cache(Consent.as_view()))
metadata = oauth_server_on(server_metadata)


def registration_refused(request) -> JsonResponse | None:
    """Why a registration, or its update, is refused before django-oauth-toolkit reads it; None when it is not.

    Each registration is a row, so an address registers or updates at most REGISTRATIONS_PER_MINUTE clients a minute.
    """
    if request.method not in ("POST", "PUT"):
        return None
    if auth.count_request(f"oauth-register:{request.META.get('REMOTE_ADDR')}") > REGISTRATIONS_PER_MINUTE:
        description = f"at most {REGISTRATIONS_PER_MINUTE} registrations a minute from one address"
        return JsonResponse({"error": "slow_down", "error_description": description}, status=429)
    try:
        registrations.check(announced_length(request), lambda: request.body)
    except registrations.Refusal as refusal:
        return JsonResponse({"error": refusal.error, "error_description": refusal.description}, status=400)
    return None


def announced_length(request) -> int:
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0


@csrf_exempt
def register(request):
    """RFC 7591 registration, open to any client, within the console's bounds (approvals.oauth.registrations)."""
    return registration_refused(request) or DynamicClientRegistrationView.as_view()(request)


@csrf_exempt
def manage_registration(request, client_id):
    """RFC 7592: a client reads, updates or deletes its registration; an update is held to registration's bounds."""
    return registration_refused(request) or DynamicClientRegistrationManagementView.as_view()(
        request, client_id=client_id
    )


@csrf_exempt
def token(request):
    response = clients.throttled(TokenView.as_view())(request)
    # An error raised as tokens are saved (invalid_target) comes back from django-oauth-toolkit as JSON
    # labelled text/html.
    if response.status_code >= 400 and response.content.startswith(b"{"):
        response["Content-Type"] = "application/json"
    response["Cache-Control"] = "no-store"
    return response


registration = oauth_server_on(register)
registration_management = oauth_server_on(manage_registration)
tokens = oauth_server_on(token)
