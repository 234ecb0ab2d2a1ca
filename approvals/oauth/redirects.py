"""Which redirect URIs a client may register: https anywhere, plain http only back to this machine (RFC 8252 §7.3)."""

from urllib.parse import urlsplit

from approvals.loopback import is_loopback_host


def redirect_problem(uri: str) -> str:
    """Why a client may not be sent back to this URI; empty when it may."""
    try:
        parts = urlsplit(uri)
        host = parts.hostname or ""
    except ValueError:
        return "the redirect URI is not a URL"
    if parts.fragment:
        return "a redirect URI may not have a fragment"
    if parts.scheme == "https" and host:
        return ""
    if parts.scheme == "http" and is_loopback_host(host):
        return ""
    return "a redirect URI must use https, or plain http back to this machine (127.0.0.1, [::1] or localhost)"
