"""What the console takes of a dynamic registration (RFC 7591, and its RFC 7592 update): a bounded document, the
authorization code grant alone, redirect URIs it would send a person to; and the registrations nobody ever allowed,
pruned a day on, so that open registration leaves nothing behind for long."""

import datetime
import json

from django.utils import timezone
from oauth2_provider.models import get_application_model

from approvals.oauth.models import OAuthGrant
from approvals.oauth.redirects import redirect_problem

DOCUMENT_MAX_BYTES = 16 * 1024
REDIRECT_URIS_MAX = 10
REDIRECT_URI_MAX_CHARS = 2 * 1024
GRANT_TYPES = ("authorization_code", "refresh_token")
UNUSED_FOR = datetime.timedelta(hours=24)


class Refusal(ValueError):
    """An RFC 7591 error: its code and its description."""

    def __init__(self, error: str, description: str):
        super().__init__(description)
        self.error, self.description = error, description


def check(length: int, read_body) -> None:
    """Refuse a registration document the console does not take; one it may take is left to django-oauth-toolkit,
    which answers a malformed one itself. `length` is what the request announces, so a huge body is never read."""
    if length > DOCUMENT_MAX_BYTES or len(body := read_body()) > DOCUMENT_MAX_BYTES:
        raise Refusal("invalid_client_metadata", f"a registration document is at most {DOCUMENT_MAX_BYTES} bytes")
    try:
        document = json.loads(body or b"{}")
    except ValueError:
        return
    if isinstance(document, dict):
        check_redirects(document.get("redirect_uris"))
        check_grants(document.get("grant_types"), document.get("response_types"))


def check_redirects(uris) -> None:
    if not isinstance(uris, list):
        return
    if len(uris) > REDIRECT_URIS_MAX:
        raise Refusal("invalid_redirect_uri", f"a client registers at most {REDIRECT_URIS_MAX} redirect URIs")
    for uri in uris:
        if not isinstance(uri, str):
            continue
        if len(uri) > REDIRECT_URI_MAX_CHARS:
            raise Refusal("invalid_redirect_uri", f"a redirect URI is at most {REDIRECT_URI_MAX_CHARS} characters")
        if problem := redirect_problem(uri):
            raise Refusal("invalid_redirect_uri", problem)


def check_grants(grant_types, response_types) -> None:
    for grant in grant_types if isinstance(grant_types, list) else []:
        if grant not in GRANT_TYPES:
            raise Refusal(
                "invalid_client_metadata",
                f"this console registers clients for the authorization_code and refresh_token grants, not {grant!r}",
            )
    for response_type in response_types if isinstance(response_types, list) else []:
        if response_type != "code":
            raise Refusal("invalid_client_metadata", f"the response type is code, not {response_type!r}")


def by_admin(client_id: str) -> bool:
    """Whether an admin registered this client, and so its redirect URIs, rather than the client itself."""
    application = get_application_model()
    return application.objects.filter(
        client_id=client_id, registration_source=application.RegistrationSource.MANUAL
    ).exists()


def prune_unused() -> int:
    """Delete the clients registered by themselves (dynamically or by metadata document) more than a day ago for
    which no person ever allowed anything; their registration tokens go with them. How many went."""
    application = get_application_model()
    registered = application.objects.filter(
        registration_source__in=[application.RegistrationSource.DCR, application.RegistrationSource.CIMD],
        created__lt=timezone.now() - UNUSED_FOR,
    )
    _, deleted = registered.exclude(pk__in=OAuthGrant.objects.values("application")).delete()
    return deleted.get(application._meta.label, 0)
