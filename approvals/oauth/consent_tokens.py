"""The client token a person's consent becomes: made when the client exchanges the code the consent page's
Allow gave it (record_grant, which the request validator calls), renewed, and ended; each step audited.

Audit events name the client, the person and the scopes, never a token or code.
"""

import secrets

from django.utils import timezone
from oauth2_provider.models import clear_expired, get_grant_model, get_refresh_token_model

from approvals.audit import chain
from approvals.audit.chain import Actor
from approvals.oauth import scopes
from approvals.oauth.models import OAuthGrant
from approvals.tokens.credentials import actor_of, owner_in_standing, stamp
from approvals.tokens.models import ClientToken

NAME_MAX = ClientToken._meta.get_field("name").max_length


def client_name(application) -> str:
    return application.name or application.client_id


def token_name(application, user) -> str:
    # Names are unique and kept after revocation; a short random tail tells one grant from the next.
    tail = f" · {user.get_username()[:20]} · {secrets.token_hex(3)}"
    return client_name(application)[: NAME_MAX - len(tail)] + tail


def facts(grant: OAuthGrant) -> dict:
    return {
        "client": client_name(grant.application),
        "client_id": grant.application.client_id,
        "redirect_uri": grant.redirect_uri,
        "scope": grant.scope,
        "resource": grant.resource,
        "expires_at": stamp(grant.token.expires_at),
    }


def record_grant(*, user, application, token_family, scope: str, resource: str, redirect_uri: str, expires_at):
    """The client token an exchanged authorization code stands for: owned by the person who allowed it."""
    token = ClientToken.objects.create(
        name=token_name(application, user),
        tool_globs=scopes.globs_of(scope.split()) or ["*"],
        created_by=user,
        owner=user,
        description=f"OAuth client {client_name(application)}"[:500],
        expires_at=expires_at,
    )
    grant = OAuthGrant.objects.create(
        token=token,
        application=application,
        token_family=token_family,
        granted_by=user,
        scope=scope,
        resource=resource,
        redirect_uri=redirect_uri,
    )
    chain.record("oauth.granted", Actor.user(user), token=token, data=facts(grant))
    return grant


def note_refresh(token_family):
    grant = OAuthGrant.objects.select_related("token", "application").filter(token_family=token_family).first()
    if grant is None:
        return
    OAuthGrant.objects.filter(pk=grant.pk).update(refreshed_at=timezone.now())
    chain.record("oauth.refreshed", chain.SYSTEM, token=grant.token, data=facts(grant))


def note_denial(user, application, redirect_uri: str, scope: str):
    data = {"client": client_name(application), "client_id": application.client_id, "redirect_uri": redirect_uri}
    chain.record("oauth.denied", actor_of(user), data={**data, "scope": scope})


def usable(token_family) -> bool:
    """Whether the grant behind a refresh-token family may still be renewed: its client token neither revoked
    nor expired, and its person still active and holding a role. A family with no grant was issued before one
    was recorded, and is not renewed."""
    token = ClientToken.objects.filter(oauth_grant__token_family=token_family).first()
    return token is not None and not token.revoked and not token.expired() and owner_in_standing(token)


def end_grant(token: ClientToken):
    """Revoke the refresh tokens of a client token's grant, if it has one. Its access tokens stay, refused
    for the revoked client token they stand for, so that the client is told so."""
    family = get_refresh_token_model().objects.filter(
        token_family__in=OAuthGrant.objects.filter(token=token).values("token_family")
    )
    family.filter(revoked__isnull=True).update(revoked=timezone.now())


def end_grants_of(user) -> dict:
    """Revoke every refresh token the person holds and delete the authorization codes not yet exchanged, whatever
    grant they belong to; how many of each. Their access tokens are refused for the client tokens they stand for."""
    now = timezone.now()
    refreshed = get_refresh_token_model().objects.filter(user=user, revoked__isnull=True).update(revoked=now)
    codes, _ = get_grant_model().objects.filter(user=user).delete()
    return {"refresh_tokens": refreshed, "authorization_codes": codes}


def prune_expired():
    """Authorization codes past their minute, and access tokens past their life with no refresh token left
    to renew them: django-oauth-toolkit's own sweep, in its batches."""
    clear_expired()
