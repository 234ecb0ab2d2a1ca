"""The parameters an OAuth client of an MCP server chooses: scopes, PKCE, state, the authorization URL."""

import base64
import hashlib
import secrets
from urllib.parse import urlencode, urlsplit, urlunsplit

PKCE_METHOD = "S256"
# The scope by which an OpenID-flavoured authorization server issues a refresh token (SEP-2207).
OFFLINE_ACCESS = "offline_access"


def scope_words(scope: str) -> list[str]:
    return [word for word in (scope or "").split() if word]


def choose_scope(challenge_scope: str = "", scopes_supported=None, fixed: str = "") -> str:
    """The scope to ask for (MCP 2025-11-25 "scope selection"): an admin's fixed one, else the 401's, else all
    the resource's `scopes_supported`, else none (the parameter is then left out)."""
    if fixed.strip():
        return " ".join(scope_words(fixed))
    if challenge_scope.strip():
        return " ".join(scope_words(challenge_scope))
    if isinstance(scopes_supported, list):
        return " ".join(word for word in scopes_supported if isinstance(word, str) and word and " " not in word)
    return ""


def with_offline_access(scope: str, server_scopes) -> str:
    """`scope` with offline_access added when the authorization server lists it in its scopes_supported (SEP-2207).

    The console holds its connections for months, and a server of the OpenID kind issues no
    refresh token without this scope: without one, each access token's expiry would need an
    admin to connect again. A server that does not list it is never asked for it.
    """
    words = scope_words(scope)
    if isinstance(server_scopes, list) and OFFLINE_ACCESS in server_scopes and OFFLINE_ACCESS not in words:
        words.append(OFFLINE_ACCESS)
    return " ".join(words)


def consent_prompt(scope: str) -> str:
    """The prompt parameter: OpenID Connect grants offline_access only with the person's consent asked for."""
    return "consent" if OFFLINE_ACCESS in scope_words(scope) else ""


def step_up_scope(granted: str, wanted: str) -> str:
    """What a step-up asks for: the scope held and the scope the 403 named, neither lost."""
    return " ".join(dict.fromkeys(scope_words(granted) + scope_words(wanted)))


def covers(granted: str, wanted: str) -> bool:
    return set(scope_words(wanted)) <= set(scope_words(granted))


def new_verifier() -> str:
    """An RFC 7636 code verifier: 43 characters of 256 random bits."""
    return secrets.token_urlsafe(32)


def challenge_for(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


def new_state() -> str:
    return secrets.token_urlsafe(32)


def state_digest(state: str) -> str:
    """What is stored of a state: enough to find its flow, useless to whoever reads the database."""
    return hashlib.sha256(state.encode()).hexdigest()


def authorization_url(endpoint: str, params: dict[str, str]) -> str:
    """The endpoint with the request's parameters added to any it already has; empty values are left out."""
    parts = urlsplit(endpoint)
    query = "&".join(q for q in (parts.query, urlencode({k: v for k, v in params.items() if v})) if q)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))
