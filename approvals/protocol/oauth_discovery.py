"""Where an OAuth client looks for an MCP server's authorization: the WWW-Authenticate challenge, protected
resource metadata (RFC 9728), authorization server metadata (RFC 8414, OpenID Connect discovery), and the
2025-03-26 fallbacks. Pure functions over URLs and strings; the fetching is approvals.upstream.oauth_http's.
"""

import re
from urllib.parse import urlsplit, urlunsplit

PRM_WELL_KNOWN = "/.well-known/oauth-protected-resource"
OAUTH_WELL_KNOWN = "/.well-known/oauth-authorization-server"
OPENID_WELL_KNOWN = "/.well-known/openid-configuration"
# A 2025-03-26 server without metadata keeps these at its origin (that revision's "default endpoints").
LEGACY_ENDPOINTS = {
    "authorization_endpoint": "/authorize",
    "token_endpoint": "/token",
    "registration_endpoint": "/register",
}

# auth-param = token BWS "=" BWS ( token / quoted-string ), RFC 9110 section 11.2.
_PARAM = re.compile(r'\s*([!#$%&\'*+.^_`|~0-9A-Za-z-]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^\s,]*)\s*,?')
_SCHEME = re.compile(r"\s*([!#$%&\'*+.^_`|~0-9A-Za-z-]+)(?:\s+|$)")


class DiscoveryError(ValueError):
    """Metadata that cannot be used as it stands: the message says what is wrong with it."""


def parse_challenges(header: str) -> dict[str, dict[str, str]]:
    """WWW-Authenticate's challenges by lower-case scheme, each its parameters by lower-case name.

    token68 challenges (Basic's realm-less form) keep no parameters; anything unreadable ends the parse.
    """
    challenges: dict[str, dict[str, str]] = {}
    position, current = 0, None
    while position < len(header):
        param = _PARAM.match(header, position)
        if param and current is not None and not _starts_scheme(header, position):
            name, value = param.group(1).lower(), param.group(2)
            if value.startswith('"'):
                value = re.sub(r"\\(.)", r"\1", value[1:-1])
            challenges[current].setdefault(name, value)
            position = param.end()
            continue
        scheme = _SCHEME.match(header, position)
        if not scheme:
            break
        current = scheme.group(1).lower()
        challenges.setdefault(current, {})
        position = scheme.end()
        # A token68 after the scheme (Basic abc==) holds no parameters.
        token68 = re.match(r"[A-Za-z0-9._~+/-]+=*\s*(,|$)", header[position:])
        if token68 and not _PARAM.match(header, position):
            position += token68.end()
    return challenges


def _starts_scheme(header: str, position: int) -> bool:
    # "Bearer realm=x, DPoP algs=y": a token followed by a space and another token begins the next challenge.
    return (
        re.match(r"\s*[!#$%&\'*+.^_`|~0-9A-Za-z-]+\s+[!#$%&\'*+.^_`|~0-9A-Za-z-]+\s*=", header[position:]) is not None
    )


def bearer_challenge(header: str) -> dict[str, str]:
    return parse_challenges(header or "").get("bearer", {})


def origin(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), "", "", ""))


def _path(url: str) -> str:
    return urlsplit(url).path.rstrip("/")


def resource_metadata_urls(server_url: str, from_challenge: str = "") -> list[str]:
    """Where to look for the protected resource metadata, first to last (RFC 9728 section 3.1, MCP 2025-11-25)."""
    candidates = [from_challenge] if from_challenge else []
    path = _path(server_url)
    if path:
        candidates.append(origin(server_url) + PRM_WELL_KNOWN + path)
    candidates.append(origin(server_url) + PRM_WELL_KNOWN)
    return list(dict.fromkeys(candidates))


def authorization_server_metadata_urls(issuer: str) -> list[str]:
    """Where to look for an issuer's metadata, first to last: RFC 8414 and OpenID Connect, path inserted, then
    OpenID's path appended, as the MCP authorization spec orders them."""
    base, path = origin(issuer), _path(issuer)
    if not path:
        return [base + OAUTH_WELL_KNOWN, base + OPENID_WELL_KNOWN]
    return [base + OAUTH_WELL_KNOWN + path, base + OPENID_WELL_KNOWN + path, base + path + OPENID_WELL_KNOWN]


def legacy_endpoints(server_url: str) -> dict[str, str]:
    """The endpoints a 2025-03-26 server without metadata is taken to have, at its origin."""
    return {name: origin(server_url) + path for name, path in LEGACY_ENDPOINTS.items()}


def canonical_resource(url: str) -> str:
    """The MCP server's URL as RFC 8707's `resource`: lower-case scheme and host, no fragment."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path, parts.query, ""))


def check_resource(resource: str, server_url: str) -> str:
    """The metadata's `resource` if it names this server (the same origin, a path that contains the server's)."""
    if not isinstance(resource, str) or not resource:
        raise DiscoveryError("the protected resource metadata names no resource")
    if origin(resource) != origin(server_url) or not (_path(server_url) + "/").startswith(_path(resource) + "/"):
        raise DiscoveryError(f"the protected resource metadata is for {resource}, not for {server_url}")
    return canonical_resource(resource)


def check_server_metadata(metadata, metadata_url: str, *, legacy: bool = False) -> dict:
    """Authorization server metadata the console may use, or DiscoveryError saying why not."""
    if not isinstance(metadata, dict):
        raise DiscoveryError(f"the metadata at {metadata_url} is not a JSON object")
    issuer = metadata.get("issuer")
    if not isinstance(issuer, str) or origin(issuer) != origin(metadata_url):
        raise DiscoveryError(f"the metadata at {metadata_url} names issuer {issuer!r}, of another origin")
    for name in ("authorization_endpoint", "token_endpoint", "registration_endpoint"):
        value = metadata.get(name)
        if value is not None and (not isinstance(value, str) or urlsplit(value).scheme not in ("http", "https")):
            raise DiscoveryError(f"the metadata's {name} is not an http(s) URL: {value!r}")
    methods = metadata.get("code_challenge_methods_supported")
    # 2025-11-25 tells clients to refuse a server that does not say it supports S256; older ones may not say.
    if (methods is not None or not legacy) and "S256" not in (methods or []):
        raise DiscoveryError("the authorization server does not support PKCE with S256")
    return metadata
