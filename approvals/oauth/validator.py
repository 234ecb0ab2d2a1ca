"""django-oauth-toolkit's request validator, told what the console adds: tool scopes, loopback-only plain
http redirects, and a client token for every authorization code exchanged (made by oauth.consent_tokens)."""

import datetime
import hashlib

from oauth2_provider.models import get_refresh_token_model
from oauth2_provider.oauth2_validators import OAuth2Validator

from approvals import roles
from approvals.oauth import consent_tokens, scopes
from approvals.oauth.redirects import redirect_problem

# What the consent page put into the authorization code beside the standard fields.
EXPIRY_CLAIM = "console_expires_at"


def refresh_family(refresh_token: str):
    checksum = hashlib.sha256(refresh_token.encode()).hexdigest()
    return get_refresh_token_model().objects.filter(token_checksum=checksum).values_list("token_family", flat=True)[0]


class ConsoleValidator(OAuth2Validator):
    def validate_scopes(self, client_id, scopes_asked, client, request, *args, **kwargs):
        return scopes.known(scopes_asked)

    def validate_redirect_uri(self, client_id, redirect_uri, request, *args, **kwargs):
        return not redirect_problem(redirect_uri) and super().validate_redirect_uri(
            client_id, redirect_uri, request, *args, **kwargs
        )

    def validate_code(self, client_id, code, client, request, *args, **kwargs):
        valid = super().validate_code(client_id, code, client, request, *args, **kwargs)
        # A code the person was given just before their access ended is worth nothing after.
        return valid and roles.in_standing(request.user.pk)

    def validate_refresh_token(self, refresh_token, client, request, *args, **kwargs):
        valid = super().validate_refresh_token(refresh_token, client, request, *args, **kwargs)
        # A grant revoked on the Tokens page, or past the expiry its person chose, renews nothing.
        return valid and consent_tokens.usable(request.refresh_token_instance.token_family)

    def _save_bearer_token(self, token, request, *args, **kwargs):
        super()._save_bearer_token(token, request, *args, **kwargs)
        family = refresh_family(token["refresh_token"])
        if request.grant_type == "refresh_token":
            consent_tokens.note_refresh(family)
            return
        claims = request.claims or {}
        expires_at = claims.get(EXPIRY_CLAIM)
        consent_tokens.record_grant(
            user=request.user,
            application=request.client,
            token_family=family,
            scope=token["scope"],
            resource=(request.resource or [""])[0],
            redirect_uri=request.redirect_uri or "",
            expires_at=datetime.datetime.fromisoformat(expires_at) if expires_at else None,
        )


def code_claims(expires_at: datetime.datetime | None) -> dict:
    return {EXPIRY_CLAIM: expires_at.astimezone(datetime.UTC).isoformat() if expires_at else None}
