"""Reaching a URL someone else chose (a webhook endpoint an admin typed, the endpoints an upstream server's
metadata names): the one address policy and the one pinned connection, for every such request; and the CAs the
console's outbound HTTPS trusts, an upstream server's included.

A host is resolved once and reached at the address checked, never resolved again (a name that answers a public
address to the check and a private one to the connection gets nowhere); loopback, private, link-local (cloud
metadata), shared and reserved addresses are refused unless the host is among the allowed hosts, which a setting
lists as names, addresses and networks (CIDR). Where https is required, a listed host may still use plain http,
as local development and test servers do. httpx, no Django: the callers pass the setting's value and name.
"""

import asyncio
import ipaddress
import socket
import ssl
from functools import lru_cache
from urllib.parse import urlsplit

import httpx


class Refused(Exception):
    """A URL the policy will not reach; the message says why and which setting would allow it."""


class Unresolved(Refused):
    """A host that resolves to nothing now; it may resolve later."""


def url_problem(url: str) -> str:
    """Why a URL cannot be reached at all, or ""."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 -- reading it checks it
    except ValueError:
        return "the URL cannot be read"
    if parts.scheme not in ("http", "https"):
        return "only http and https URLs are allowed"
    if not parts.hostname:
        return "the URL names no host"
    if parts.username or parts.password:
        return "the URL may not carry a user name or password"
    return ""


def listed(host: str, address, allowed_hosts) -> bool:
    """Whether the host is among `allowed_hosts`: by its name, or by the address it resolved to."""
    address = getattr(address, "ipv4_mapped", None) or address
    for entry in allowed_hosts:
        try:
            if address in ipaddress.ip_network(entry, strict=False):
                return True
        except ValueError:
            if entry.lower().rstrip(".") == host.lower().rstrip("."):
                return True
    return False


def allowed(host: str, address, allowed_hosts) -> bool:
    """Whether `address`, which `host` resolved to, may be reached: a public address, or a listed host's."""
    if listed(host, address, allowed_hosts):
        return True
    address = getattr(address, "ipv4_mapped", None) or address
    return address.is_global and not address.is_multicast


async def checked(url: str, allowed_hosts, setting: str, *, https_only: bool = False):
    """The one address `url` is to be reached at; Refused when the URL, its scheme or any address of its host is
    not allowed."""
    problem = url_problem(url)
    if problem:
        raise Refused(f"{url}: {problem}")
    parts = urlsplit(url)
    host, port = parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise Unresolved(f"the host {host} could not be resolved: {exc.strerror}") from None
    addresses = list(dict.fromkeys(ipaddress.ip_address(info[4][0].partition("%")[0]) for info in infos))
    refused = [address for address in addresses if not allowed(host, address, allowed_hosts)]
    if refused or not addresses:
        raise Refused(
            f"the host {host} resolves to {refused[0] if refused else 'nothing'}, a loopback, private, "
            f"link-local or reserved address; list it in {setting} to allow it"
        )
    if https_only and parts.scheme != "https" and not all(listed(host, a, allowed_hosts) for a in addresses):
        raise Refused(f"it is not https, and only a host listed in {setting} may use plain http")
    return addresses[0]


def refused_at(url: str, allowed_hosts, setting: str, timeout: float) -> str:
    """Why the policy would refuse `url` for the address its host resolves to now, or "", from code without an
    event loop (a form being saved). A host that does not resolve within `timeout` is left to the request itself,
    which is checked again when it is made."""

    async def bounded():
        async with asyncio.timeout(timeout):
            await checked(url, allowed_hosts, setting)

    try:
        asyncio.run(bounded())
    except (Unresolved, TimeoutError, OSError, UnicodeError):
        return ""
    except Refused as exc:
        return str(exc)
    return ""


@lru_cache(maxsize=1)
def tls_context() -> ssl.SSLContext:
    """The CAs the console's outbound HTTPS trusts, as httpx picks them (SSL_CERT_FILE, else SSL_CERT_DIR, else
    certifi's), loaded once per process: loading them takes a tenth of a second no request should wait on."""
    return httpx.create_ssl_context()


def pinned_url(url: httpx.URL, address) -> httpx.URL:
    """`url` at `address`: the request still names its host to TLS (SNI, the certificate's name) and in Host."""
    return url.copy_with(host=str(address))


class PinnedTransport(httpx.AsyncBaseTransport):
    """An httpx transport that checks each request's URL and connects to the address it checked.

    Each host name has connections of its own: pooled by address alone, a connection whose certificate was checked
    for one name would carry the requests of another name at the same address. `inner` (tests) replaces them all;
    `verify` is httpx's (a caller sending often passes one SSL context it keeps: loading the CAs is slow)."""

    def __init__(self, allowed_hosts, setting: str, *, https_only: bool = False, inner=None, verify=True):
        self.allowed_hosts, self.setting, self.https_only = list(allowed_hosts), setting, https_only
        self.inner, self.verify = inner, verify
        self.pools: dict[str, httpx.AsyncBaseTransport] = {}

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        address = await checked(str(request.url), self.allowed_hosts, self.setting, https_only=self.https_only)
        host = request.url.host
        request.extensions = {**request.extensions, "sni_hostname": host}
        request.url = pinned_url(request.url, address)
        pool = self.inner or self.pools.get(host)
        if pool is None:
            pool = self.pools[host] = httpx.AsyncHTTPTransport(verify=self.verify)
        return await pool.handle_async_request(request)

    async def aclose(self) -> None:
        for pool in [self.inner, *self.pools.values()]:
            if pool is not None:
                await pool.aclose()
