"""Whether a request may come from where it says: a Host this console serves, and a page of its own.

Asked by the guard in front of /mcp and by the operators' websocket, both before
Django. A browser names the page behind a request in Origin: scheme, host and
port. Another site, a name rebound to this address (DNS rebinding) and another
port of this very host are all someone else's pages. An Origin is the console's
when all three equal the console's own origin (the scheme the request arrived by,
SECURE_PROXY_SSL_HEADER taken into account as Django takes it, and its Host) or
one of CSRF_TRUSTED_ORIGINS, which Django's CSRF check trusts for the pages' forms.
"""

import functools
from urllib.parse import urlsplit

from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.http.request import is_same_domain, split_domain_port, validate_host

DEFAULT_PORTS = {"http": 80, "https": 443}
# A websocket's scope names the scheme of the socket's URL; its page's origin has the web scheme.
WEB_SCHEMES = {"http": "http", "https": "https", "ws": "http", "wss": "https"}


def allowed_hosts() -> list[str]:
    # Django's own rule: with DEBUG and no ALLOWED_HOSTS, local names are allowed.
    if settings.DEBUG and not settings.ALLOWED_HOSTS:
        return [".localhost", "127.0.0.1", "[::1]"]
    return settings.ALLOWED_HOSTS


def is_allowed_host(host: str) -> bool:
    return host_among(host, tuple(allowed_hosts()))


# Every request names its Host, and a console is known by few: each is judged once for the hosts it is judged by.
@functools.lru_cache(maxsize=256)
def host_among(host: str, hosts: tuple[str, ...]) -> bool:
    domain, _port = split_domain_port(host)
    return bool(domain) and validate_host(domain, hosts)


def header(scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key.lower() == name:
            return value.decode("latin-1")
    return None


def web_origin(url: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) of an http or https URL, the port filled in from the scheme; None for anything else."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or not parts.hostname:
        return None
    return scheme, parts.hostname, port or DEFAULT_PORTS[scheme]


def request_scheme(scope) -> str:
    """http or https, as Django's request.scheme reads it."""
    if settings.SECURE_PROXY_SSL_HEADER:
        meta_name, secure_value = settings.SECURE_PROXY_SSL_HEADER
        value = header(scope, meta_name.removeprefix("HTTP_").replace("_", "-").lower().encode())
        if value is not None:
            return "https" if value.split(",", 1)[0].strip() == secure_value else "http"
    return WEB_SCHEMES.get(scope.get("scheme", "http"), "http")


def is_trusted(origin: tuple[str, str, int], netloc: str) -> bool:
    """Whether CSRF_TRUSTED_ORIGINS names this origin, exactly or (https://*.example.com) as a subdomain."""
    for trusted in settings.CSRF_TRUSTED_ORIGINS:
        scheme, _, rest = trusted.partition("://")
        if rest.startswith("*."):
            if scheme.lower() == origin[0] and is_same_domain(netloc, rest[1:]):
                return True
        elif web_origin(trusted) == origin:
            return True
    return False


def foreign_origin_problem(scope, *, origin_required: bool = False) -> str:
    """Why the request's Host or Origin is not this console's, or '' when both are.

    A request without Origin comes from no browser page, so no page can have sent it;
    `origin_required` refuses it all the same, for what only the console's pages use.
    """
    host = header(scope, b"host")
    if host is None and scope.get("server"):
        server_host, server_port = scope["server"]
        host = f"{server_host}:{server_port}"
    if not host or not is_allowed_host(host):
        return "Forbidden: the Host header names no host this console serves"
    origin = header(scope, b"origin")
    if origin is None:
        return "Forbidden: the request names no Origin" if origin_required else ""
    given = web_origin(origin)
    own = web_origin(f"{request_scheme(scope)}://{host}")
    if given is None or (given != own and not is_trusted(given, urlsplit(origin).netloc.lower())):
        return "Forbidden: requests from this Origin are not allowed"
    return ""


class OwnPagesOnly:
    """Lets a websocket through only from a page of the console's own; a browser always names its Origin."""

    def __init__(self, application):
        self.application = application

    async def __call__(self, scope, receive, send):
        if foreign_origin_problem(scope, origin_required=True):
            return await WebsocketDenier()(scope, receive, send)
        return await self.application(scope, receive, send)
