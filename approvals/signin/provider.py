"""The OpenID provider's description of itself (OpenID Connect Discovery 1.0), read from OIDC_ISSUER.

Its endpoints and key set are asked for only when someone signs in with SSO, and kept for an hour per process, so
that a provider that moves its endpoints is followed without a restart. The document must name the very issuer it
was fetched for, as the specification requires: a provider answering for another issuer is refused.
"""

import threading
import time

import requests
from django.conf import settings

WELL_KNOWN = "/.well-known/openid-configuration"
KEEP_SECONDS = 3600
REQUIRED = ("authorization_endpoint", "token_endpoint", "jwks_uri")

_lock = threading.Lock()
_known: dict[str, tuple[float, dict]] = {}


class ProviderError(Exception):
    """The provider could not be asked, or answered what the console cannot accept (a discovery document of
    another issuer, a userinfo answer about someone else)."""


def metadata() -> dict:
    """The discovery document of OIDC_ISSUER, from this process's copy while it is under an hour old."""
    issuer = settings.OIDC_ISSUER
    with _lock:
        kept = _known.get(issuer)
    if kept is not None and time.monotonic() - kept[0] < KEEP_SECONDS:
        return kept[1]
    found = fetch(issuer)
    with _lock:
        _known[issuer] = (time.monotonic(), found)
    return found


def forget():
    with _lock:
        _known.clear()


def fetch(issuer: str) -> dict:
    url = issuer.rstrip("/") + WELL_KNOWN
    try:
        response = requests.get(url, timeout=settings.OIDC_TIMEOUT, allow_redirects=False)
        response.raise_for_status()
        found = response.json()
    except (requests.RequestException, ValueError) as error:
        raise ProviderError(f"the identity provider's discovery document ({url}) could not be read: {error}") from None
    if not isinstance(found, dict):
        raise ProviderError(f"{url} does not hold a JSON object")
    if found.get("issuer") != issuer:
        raise ProviderError(
            f"{url} describes the issuer {found.get('issuer')!r}, not OIDC_ISSUER {issuer!r}: set it to exactly that"
        )
    missing = [name for name in REQUIRED if not isinstance(found.get(name), str) or not found[name]]
    if missing:
        raise ProviderError(f"{url} names no {', '.join(missing)}")
    return found
