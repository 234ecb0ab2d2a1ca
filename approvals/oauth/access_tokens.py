"""The client token an OAuth access token stands for, at the resource it was issued for."""

import hashlib

from oauth2_provider.models import get_access_token_model, get_refresh_token_model

from approvals.oauth.models import OAuthGrant
from approvals.tokens.credentials import UNKNOWN, Admission, admit_token, stamp


def same_resource(request_uri: str, audiences: list) -> bool:
    """RFC 8707: a token is good only at the very resource it names, not at others under it."""
    return request_uri in audiences


def admit_access_token(secret: str, resource: str, peer: str = "") -> Admission:
    checksum = hashlib.sha256(secret.encode()).hexdigest()
    access = get_access_token_model().objects.filter(token_checksum=checksum).first()
    if access is None:
        return Admission(None, UNKNOWN)
    if access.is_expired():
        return Admission(None, f"the access token expired at {stamp(access.expires)}; refresh it")
    # A token naming no resource would be good anywhere; the consent page names this one on every grant.
    if not access.resource or not access.allows_audience(resource):
        return Admission(None, f"the access token was issued for another resource than {resource}")
    families = get_refresh_token_model().objects.filter(access_token=access).values("token_family")
    grant = OAuthGrant.objects.select_related("token").filter(token_family__in=families).first()
    if grant is None:
        return Admission(None, UNKNOWN)
    return admit_token(grant.token, peer)
