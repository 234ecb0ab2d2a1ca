"""The sign-in pages: the password form (while LOCAL_LOGIN is on, else for superusers at /login/local/), and the
way to and back from the OpenID provider (while OIDC_ISSUER is set). docs/sso.md tells how to set them up."""

import logging

import requests
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.views import LoginView
from django.core.exceptions import SuspiciousOperation
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from mozilla_django_oidc.views import OIDCAuthenticationCallbackView, OIDCAuthenticationRequestView

from approvals.audit import chain
from approvals.audit.chain import SYSTEM
from approvals.signin import provider
from approvals.signin.forms import ThrottledAuthenticationForm
from approvals.signin.signals import client_address
from approvals.signin.sso import REFUSAL

log = logging.getLogger(__name__)

TEMPLATE = "registration/login.html"
UNREACHABLE = "The identity provider cannot be reached just now, so SSO is unavailable. Try again in a moment."
FAILED = "Signing in with SSO did not succeed. Try again; if it keeps failing, ask your administrator."


@never_cache
def login(request):
    if not settings.LOCAL_LOGIN:
        # Nothing here checks a password, whatever is posted.
        return render(
            request,
            TEMPLATE,
            {"sso": bool(settings.OIDC_ISSUER), "local_login": False, "next": request.GET.get("next", "")},
        )
    return password_form(request, sso=bool(settings.OIDC_ISSUER))


def break_glass(request):
    """The password form for superusers while LOCAL_LOGIN is off; their sign-ins are audited as break-glass."""
    if settings.LOCAL_LOGIN:
        return redirect("login")
    return password_form(request, sso=False, break_glass=True)


def password_form(request, **context):
    view = LoginView.as_view(
        authentication_form=ThrottledAuthenticationForm, extra_context={"local_login": True, **context}
    )
    return view(request)


class SsoStart(OIDCAuthenticationRequestView):
    """Sends the browser to the provider with a fresh state, nonce and PKCE challenge, kept in the session."""

    def __init__(self, **kwargs):
        # The library's own reads the provider's endpoint from settings; here it comes from discovery, in get().
        super(OIDCAuthenticationRequestView, self).__init__(**kwargs)

    def get(self, request):
        if not settings.OIDC_ISSUER:
            raise Http404("Single sign-on is not set up.")
        try:
            found = provider.metadata()
        except provider.ProviderError as error:
            log.warning("SSO unavailable: %s", error)
            messages.error(request, UNREACHABLE)
            return redirect("login")
        self.OIDC_OP_AUTH_ENDPOINT, self.OIDC_RP_CLIENT_ID = found["authorization_endpoint"], settings.OIDC_CLIENT_ID
        return super().get(request)


class SsoCallback(OIDCAuthenticationCallbackView):
    """Where the provider sends the browser back: the code is exchanged, the ID token checked, the person signed in
    (sso.SsoBackend) or refused with the reason."""

    def get(self, request):
        if not settings.OIDC_ISSUER:
            raise Http404("Single sign-on is not set up.")
        try:
            return super().get(request)
        except (SuspiciousOperation, provider.ProviderError, requests.RequestException) as error:
            # A state this browser never started, a provider's refusal of the code, a token that fails its checks.
            log.warning("SSO sign-in failed: %s", error)
            return self.failed(str(error))

    def login_failure(self):
        refusal = getattr(self.request, REFUSAL, None)
        if refusal:
            messages.error(self.request, refusal)
            return redirect("login")
        error = self.request.GET.get("error", "")[:100]
        return self.failed(f"the identity provider answered {error}" if error else "no sign-in was under way")

    def failed(self, reason: str):
        data = {"method": "sso", "issuer": settings.OIDC_ISSUER, "address": client_address(self.request)}
        chain.record("user.login_failed", SYSTEM, data={**data, "reason": reason[:500]})
        messages.error(self.request, FAILED)
        return redirect("login")
