"""POSTing one webhook body: the only code that talks to endpoints, with one error type.

Bounded everywhere an endpoint could hold a worker: the whole attempt (resolving the name,
connecting, sending, the answer) by one deadline, the answer read up to a small size.
Redirects are answers, not instructions: a 3xx fails the attempt rather than sending the
event elsewhere. An endpoint is resolved at delivery and reached at the address checked,
never resolved again (a name that answers a public address to the check and a private one
to the connection gets nowhere); loopback, private, link-local (cloud metadata), shared and
reserved addresses are refused unless the host is among the allowed hosts.
"""

import asyncio
import ipaddress
import socket
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx

MAX_RESPONSE_BYTES = 64 * 1024
# How much of an answer's body is kept for the delivery's page.
KEPT_BODY_BYTES = 4096


def answered_text(status: int) -> str:
    return f"answered {status}"


class WebhookError(Exception):
    """An attempt that failed: no answer, or one that is not a 2xx. `status` is the answer's code, if any."""

    def __init__(self, message: str, status: int | None = None, elapsed_ms: float | None = None, body: str = ""):
        super().__init__(message)
        self.message, self.status, self.elapsed_ms, self.body = message, status, elapsed_ms, body


@dataclass
class Answer:
    status: int
    elapsed_ms: float
    body: str = ""


def kept_text(data: bytes) -> str:
    """The start of a body as text, for a person to read: at most KEPT_BODY_BYTES, undecodable bytes replaced."""
    return data[:KEPT_BODY_BYTES].decode("utf-8", errors="replace")


def url_problem(url: str) -> str:
    """Why a URL cannot be an endpoint, or ""."""
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


def allowed(host: str, address, allowed_hosts) -> bool:
    """Whether `address`, which `host` resolved to, may be reached: a public address, or an allowed host's.

    `allowed_hosts` holds names, addresses and networks (CIDR), as WEBHOOK_ALLOWED_HOSTS lists them.
    """
    address = getattr(address, "ipv4_mapped", None) or address
    for entry in allowed_hosts:
        try:
            if address in ipaddress.ip_network(entry, strict=False):
                return True
        except ValueError:
            if entry.lower().rstrip(".") == host.lower().rstrip("."):
                return True
    return address.is_global and not address.is_multicast


class Transport:
    def __init__(self, timeout: float, max_response_bytes: int = MAX_RESPONSE_BYTES, allowed_hosts=()):
        self.timeout, self.max_response_bytes = timeout, max_response_bytes
        self.allowed_hosts = list(allowed_hosts)

    def post(self, url: str, body: bytes, headers: dict[str, str]) -> Answer:
        """POST `body`; the answer when it is a 2xx, else WebhookError. Runs its own event loop, for its deadline."""
        problem = url_problem(url)
        if problem:
            raise WebhookError(problem)
        started = time.monotonic()
        try:
            return asyncio.run(self.attempt(url, body, headers, started))
        except TimeoutError:
            raise WebhookError(f"no answer within {self.timeout:g} seconds", elapsed_ms=ms_since(started)) from None
        except (httpx.HTTPError, httpx.InvalidURL, OSError, ValueError) as exc:
            raise WebhookError(f"{type(exc).__name__}: {exc}"[:500], elapsed_ms=ms_since(started)) from None

    async def attempt(self, url: str, body: bytes, headers: dict[str, str], started: float) -> Answer:
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        async with asyncio.timeout(self.timeout):
            address = await self.resolved(parts.hostname, port)
            # The address checked is the one connected to; the name still names the site to TLS and to Host.
            host = f"[{address}]" if address.version == 6 else str(address)
            pinned = parts._replace(netloc=f"{host}:{port}").geturl()
            headers = {**headers, "Host": parts.netloc}
            async with (
                httpx.AsyncClient(timeout=self.timeout, follow_redirects=False) as client,
                client.stream(
                    "POST", pinned, content=body, headers=headers, extensions={"sni_hostname": parts.hostname}
                ) as response,
            ):
                read, kept = 0, b""
                async for chunk in response.aiter_raw():
                    read += len(chunk)
                    if len(kept) < KEPT_BODY_BYTES:
                        kept += chunk[: KEPT_BODY_BYTES - len(kept)]
                    if read >= self.max_response_bytes:
                        break
        elapsed, body = ms_since(started), kept_text(kept)
        status = response.status_code
        if response.is_redirect:
            raise WebhookError(f"answered {status}, a redirect, which is not followed", status, elapsed, body)
        if not response.is_success:
            raise WebhookError(answered_text(status), status, elapsed, body)
        return Answer(status, elapsed, body)

    async def resolved(self, host: str, port: int):
        """The address to reach `host` at; WebhookError when the name resolves to any address not allowed."""
        try:
            addresses = await addresses_of(host, port)
        except socket.gaierror as exc:
            raise WebhookError(f"the host {host} could not be resolved: {exc.strerror}") from None
        refused = [address for address in addresses if not allowed(host, address, self.allowed_hosts)]
        if refused or not addresses:
            raise WebhookError(refusal(host, refused[0] if refused else "nothing"))
        return addresses[0]


async def addresses_of(host: str, port: int) -> list:
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(ipaddress.ip_address(info[4][0].partition("%")[0]) for info in infos))


def refusal(host: str, address) -> str:
    return (
        f"the host {host} resolves to {address}, a loopback, private, link-local or reserved address; "
        "list it in WEBHOOK_ALLOWED_HOSTS to allow it"
    )


def refused_address(url: str, allowed_hosts, timeout: float) -> str:
    """Why delivery would refuse a readable URL's host for the address it resolves to now, or "".

    A name that does not resolve in `timeout` is left to delivery, which checks every attempt again.
    """
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)

    async def bounded():
        async with asyncio.timeout(timeout):
            return await addresses_of(parts.hostname, port)

    try:
        addresses = asyncio.run(bounded())
    except (TimeoutError, OSError, UnicodeError):
        return ""
    refused = [address for address in addresses if not allowed(parts.hostname, address, allowed_hosts)]
    return refusal(parts.hostname, refused[0]) if refused else ""


def ms_since(started: float) -> float:
    return round((time.monotonic() - started) * 1000, 1)
