"""Signing in with an OpenID provider, and the roles its groups give.

The flow is mozilla-django-oidc's authorization code flow, with its state, nonce and PKCE (S256); what this module
adds is where the provider's endpoints come from (its discovery document, `provider`), the checks of the ID token
the library leaves out (issuer, audience, RS256 or ES256), and what a sign-in does to the person's account.

Roles follow the provider at every sign-in: OIDC_ROLES_CLAIM lists the person's groups and OIDC_ROLE_MAP says which
role each gives. A person whose groups give no role is refused and loses the roles they held and every credential
(actions/person_access): their sessions, API keys, client tokens and OAuth grants.
"""

import hashlib
import logging

import jwt
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.exceptions import ImproperlyConfigured, SuspiciousOperation
from django.db import transaction
from django.utils import timezone
from mozilla_django_oidc.auth import OIDCAuthenticationBackend

from approvals.actions import person_access
from approvals.audit import chain
from approvals.audit.chain import SYSTEM
from approvals.roles import ROLES
from approvals.signin import oidc_claims, provider
from approvals.signin.models import SsoIdentity
from approvals.signin.signals import IDENTITY, client_address

log = logging.getLogger(__name__)

ALGORITHMS = ["RS256", "ES256"]
# OpenID Connect Core caps a subject identifier at 255 ASCII characters.
MAX_SUBJECT = 255
# Seconds of clock difference with the provider that an ID token's times may show.
LEEWAY_SECONDS = 60
# Where a refusal's reason waits on the request, for the callback to show.
REFUSAL = "sso_refusal"
NO_ROLE = (
    "Your identity provider puts you in no group that gives a role in this console, so you cannot sign in. "
    "Ask your administrator for access."
)
DEACTIVATED = "Your account in this console is deactivated; an admin can reactivate it."


def role_map() -> dict[str, str]:
    unknown = sorted(set(settings.OIDC_ROLE_MAP.values()) - set(ROLES))
    if unknown:
        raise ImproperlyConfigured(f"OIDC_ROLE_MAP names {', '.join(unknown)}; the roles are {', '.join(ROLES)}")
    return settings.OIDC_ROLE_MAP


def check_settings():
    """Refuse to start on settings that could sign nobody in."""
    role_map()
    if settings.OIDC_ISSUER and not settings.OIDC_CLIENT_ID:
        raise ImproperlyConfigured("OIDC_ISSUER is set without OIDC_CLIENT_ID")
    if settings.OIDC_ISSUER and not settings.OIDC_ROLE_MAP:
        raise ImproperlyConfigured("OIDC_ISSUER is set without OIDC_ROLE_MAP, so SSO would give nobody a role")
    if not settings.LOCAL_LOGIN and not settings.OIDC_ISSUER:
        raise ImproperlyConfigured("LOCAL_LOGIN=off leaves only SSO, which needs OIDC_ISSUER")


class SsoBackend(OIDCAuthenticationBackend):
    def __init__(self, *args, **kwargs):
        # The library reads the provider's endpoints here. Django makes a backend for every request that reads a
        # session, so they are found in authenticate(), when someone signs in, and no page waits on the provider.
        self.UserModel = get_user_model()

    def get_user(self, user_id):
        # The library's returns a deactivated user too, whose session would then go on.
        user = super().get_user(user_id)
        return user if user is not None and user.is_active else None

    def authenticate(self, request, nonce=None, code_verifier=None, **kwargs):
        # Only the SSO callback passes a nonce: the password form's credentials never reach the provider.
        if request is None or nonce is None or not settings.OIDC_ISSUER:
            return None
        found = provider.metadata()
        self.issuer = found["issuer"]
        self.OIDC_OP_TOKEN_ENDPOINT = found["token_endpoint"]
        self.OIDC_OP_USER_ENDPOINT = found.get("userinfo_endpoint")
        self.OIDC_OP_JWKS_ENDPOINT = found["jwks_uri"]
        self.OIDC_RP_CLIENT_ID, self.OIDC_RP_CLIENT_SECRET = settings.OIDC_CLIENT_ID, settings.OIDC_CLIENT_SECRET
        # Sends the library to the provider's key set for the token's key; get_payload_data takes any of ALGORITHMS.
        self.OIDC_RP_SIGN_ALGO, self.OIDC_RP_IDP_SIGN_KEY = "RS256", None
        return super().authenticate(request, nonce=nonce, code_verifier=code_verifier)

    def verify_token(self, token, **kwargs):
        if not isinstance(token, str):
            raise SuspiciousOperation("the identity provider sent no ID token")
        try:
            return super().verify_token(token, **kwargs)
        except (jwt.PyJWTError, KeyError) as error:
            # A malformed token, or a header or key set without the `kid` the library looks keys up by.
            raise SuspiciousOperation(f"the identity provider's ID token was refused: {error!r}") from None

    def get_payload_data(self, token, key):
        try:
            return jwt.decode(
                token,
                key,
                algorithms=ALGORITHMS,
                audience=self.OIDC_RP_CLIENT_ID,
                issuer=self.issuer,
                leeway=LEEWAY_SECONDS,
                options={"require": ["iss", "sub", "aud", "exp", "iat"]},
            )
        except jwt.PyJWTError as error:
            raise SuspiciousOperation(f"the identity provider's ID token was refused: {error}") from None

    def get_userinfo(self, access_token, id_token, payload):
        """The ID token's claims with the userinfo endpoint's beside them: providers put groups in either."""
        if not self.OIDC_OP_USER_ENDPOINT:
            return payload
        info = super().get_userinfo(access_token, id_token, payload)
        if not isinstance(info, dict) or info.get("sub") != payload["sub"]:
            # Not SuspiciousOperation, which the library turns into a silent refusal here: the callback says why.
            raise provider.ProviderError("the identity provider's userinfo names another subject than its ID token")
        return {**info, **payload}

    def get_or_create_user(self, access_token, id_token, payload):
        if not isinstance(payload["sub"], str) or not 0 < len(payload["sub"]) <= MAX_SUBJECT:
            raise provider.ProviderError(f"the identity provider's subject is not a string of 1 to {MAX_SUBJECT}")
        found = self.get_userinfo(access_token, id_token, payload)
        user, refusal = sign_in(self.issuer, found, client_address(self.request))
        if refusal:
            setattr(self.request, REFUSAL, refusal)
            return None
        setattr(self.request, IDENTITY, {"issuer": self.issuer, "subject": found["sub"]})
        return user


@transaction.atomic
def sign_in(issuer: str, found: dict, address: str):
    """The user these verified claims sign in, made on their first sign-in, with the roles their groups give now;
    or (None, why they are refused). A refusal keeps what it changed: the roles taken and the sessions ended."""
    subject = found["sub"]
    who = {"issuer": issuer, "subject": subject}
    roles = oidc_claims.roles_for(oidc_claims.claimed_groups(found, settings.OIDC_ROLES_CLAIM), role_map())
    identity = SsoIdentity.objects.select_related("user").filter(**who).first()
    if identity is None and not roles:
        return refuse(None, who, NO_ROLE, address)
    if identity is None:
        identity = SsoIdentity.objects.create(user=new_user(found, who), **who)
    user = identity.user
    if not roles and not user.is_superuser:
        # Before the roles go, so that the one record of what ended gives the provider's refusal as its reason. A
        # superuser holds every role whatever the provider says (break-glass): refused here, but keeps the rest.
        person_access.end_person_access(user, person_access.REFUSED_BY_PROVIDER)
    set_roles(user, roles, who)
    if not roles:
        return refuse(user, who, NO_ROLE, address)
    if not user.is_active:
        # Deactivated by a path that ends nothing itself (an update of many rows): it ends now.
        person_access.end_person_access(user, person_access.DEACTIVATED)
        return refuse(user, who, DEACTIVATED, address)
    email = found.get("email")
    if isinstance(email, str) and email != user.email and len(email) <= 254:
        user.email = email
        user.save(update_fields=["email"])
    identity.last_signed_in_at = timezone.now()
    identity.save(update_fields=["last_signed_in_at"])
    return user, ""


def new_user(found: dict, who: dict):
    """A user named as the provider calls them, unless a user of that name exists: a name never links accounts."""
    User = get_user_model()
    base = next(
        (str(found[name])[:120] for name in ("preferred_username", "email") if isinstance(found.get(name), str)),
        who["subject"][:120],
    )
    digest = hashlib.sha256(f"{who['issuer']} {who['subject']}".encode()).hexdigest()[:12]
    username = base if not User.objects.filter(username=base).exists() else f"{base}-{digest}"
    email = found.get("email") if isinstance(found.get("email"), str) and len(found["email"]) <= 254 else ""
    user = User(username=username, email=email)
    user.set_unusable_password()
    user.save()
    return user


def set_roles(user, roles: set[str], who: dict):
    held = set(user.groups.filter(name__in=ROLES).values_list("name", flat=True))
    if held == roles:
        return
    user.groups.remove(*Group.objects.filter(name__in=held - roles))
    user.groups.add(*Group.objects.filter(name__in=roles - held))
    data = {"username": user.get_username(), **who, "before": sorted(held), "after": sorted(roles)}
    chain.record("user.roles_changed", SYSTEM, data=data)


def refuse(user, who: dict, reason: str, address: str):
    username = user.get_username() if user is not None else ""
    chain.record("user.login_refused", SYSTEM, data={"username": username, **who, "address": address, "reason": reason})
    return None, reason
