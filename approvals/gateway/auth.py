"""Who is calling: the client token behind a request, and whether it may call again this minute."""

import asyncio
import time

from asgiref.sync import sync_to_async
from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.locmem import LocMemCache
from django.urls import reverse

from approvals.db import kept
from approvals.db.shared_threads import in_shared_thread
from approvals.gateway.http import Refused, rejection
from approvals.loopback import is_loopback_address
from approvals.oauth import access_tokens, scopes
from approvals.observe import logs, metrics
from approvals.protocol import identity
from approvals.tokens import quotas
from approvals.tokens.credentials import (
    PREFIX,
    UNKNOWN,
    Admission,
    admit,
    admit_kept,
    anonymous_token,
    hash_secret,
)
from approvals.tokens.models import ClientToken

REALM = identity.NAME


async def identify(request) -> ClientToken:
    """The request's token; refuses with 401 without a valid one (saying why), 429 past the token's rate."""
    header = request.headers.get("Authorization", "").strip()
    if not header and anonymous_allowed(request):
        secret, key = None, ClientToken.ANONYMOUS
    else:
        secret = bearer_secret(header)
        if not secret:
            raise Refused(unauthorized(request, invalid=bool(header)))
        # Keyed by the credential rather than the row id, which a database may hand out again. During a
        # rotation's grace period the old and the new secret are counted apart.
        key = hash_secret(secret)
    found = await admitted_on_the_loop(secret, key)
    if found is None or found[0] is None:
        # Only an OAuth access token names the resource it was issued for: a client token's request builds no URL.
        resource = (
            "" if secret is None or client_token_secret(secret) else request.build_absolute_uri(reverse("mcp_endpoint"))
        )
        peer = request.META.get("REMOTE_ADDR") or ""
        counted = None if found is None else found[1]
        found = await in_shared_thread(admitted_and_counted)(secret, resource, peer, key, counted)
    admission, count = found
    if admission.token is None:
        # Counted for nothing: whatever a client makes up leaves no entry behind to crowd out real tokens' counts.
        await sync_to_async(forget_requests, thread_sensitive=False)(key)
        raise Refused(unauthorized(request, invalid=bool(header), problem=admission.refusal))
    logs.bind(token=admission.token.name)
    limit = quotas.rate_per_minute(admission.token)
    if count > limit:
        metrics.rate_limited()
        raise Refused(too_many_requests(limit))
    return admission.token


def admitted_and_counted(
    secret: str | None, resource: str, peer: str, credential: str, count: int | None = None
) -> tuple[Admission, int]:
    """The admission of `secret` (an anonymous client's without one) and the credential's count this minute:
    `count` when the event loop counted it already.

    In one trip to the loop's shared threads, the stamp of the kept lookups read first (db.kept): the
    rest of the request (its token here, its session and tool after) may use what the process keeps.
    An unknown credential is counted too, under its own key, and refused all the same.
    """
    kept.refresh()
    admission = Admission(anonymous_token()) if secret is None else admit_secret(secret, resource, peer)
    return admission, count_request(credential) if count is None else count


async def admitted_on_the_loop(secret: str | None, credential: str) -> tuple[Admission | None, int] | None:
    """The credential's count this minute made from the event loop, with its admission when that needs no thread
    either (else None there); None when the loop cannot count it.

    The loop counts a client token's secret when the rate is counted in this process's memory (LocMemCache: a lock
    held for an increment) or by one script on Redis (console.cache's acount), sent beside the stamp's read so that
    the request waits for one round trip, not two in turn. It admits it when the stamp can be read from the loop
    (db.kept.refresh_on_the_loop), the secret and its owner's standing are kept, and its use needs no noting; a
    request it does not admit is admitted in a thread (admitted_and_counted) with this count, so counted once.
    """
    cache = rate_cache()
    if secret is None or not client_token_secret(secret) or not counted_from_the_loop(cache):
        return None
    if isinstance(cache, LocMemCache):
        # Counted at once: a task beside the stamp's read would cost more than the count.
        count = count_request(credential, cache)
        fresh = await kept.refresh_on_the_loop()
    else:
        counting = asyncio.ensure_future(count_request_on_the_loop(credential, cache))
        try:
            fresh = await kept.refresh_on_the_loop()
        finally:
            count = await counting
    admission = admit_kept(secret, credential) if fresh else None
    if admission is None or admission.token is None:
        return None, count
    return admission, count


def counted_from_the_loop(cache) -> bool:
    return isinstance(cache, LocMemCache) or hasattr(cache, "acount")


async def count_request_on_the_loop(credential: str, cache=None) -> int:
    """count_request's count, from an event loop: in memory at once, or one script awaited on Redis."""
    cache = cache or rate_cache()
    if isinstance(cache, LocMemCache):
        return count_request(credential, cache)
    return await cache.acount(rate_key(credential), WINDOW_EXPIRY_SECONDS)


# Headers by which a proxy names the client it forwards (Forwarded is RFC 7239's).
FORWARDING_HEADERS = ("HTTP_X_FORWARDED_FOR", "HTTP_X_REAL_IP", "HTTP_FORWARDED")


def anonymous_allowed(request) -> bool:
    """Only a client on this machine that reached the console directly, never through a proxy.

    Settings refuse to start with anonymous clients unless the console answers only local
    names; the loopback peer also keeps out a remote client that reaches it through some
    forwarded port. Behind a proxy, TRUSTED_PROXIES (console/asgi.py) puts into REMOTE_ADDR what
    X-Forwarded-For says, which a client can write itself: any forwarding header at all
    means the peer is not known, and the request is no anonymous client's.
    """
    return (
        settings.ALLOW_ANONYMOUS_CLIENTS
        and not any(name in request.META for name in FORWARDING_HEADERS)
        and is_loopback_address(request.META.get("REMOTE_ADDR") or "")
    )


def admit_secret(secret: str, resource: str, peer: str) -> Admission:
    """A static client token's secret, or else an OAuth access token issued for this resource."""
    if client_token_secret(secret):
        return admit(secret, peer, kept=True)
    return access_tokens.admit_access_token(secret, resource, peer)


def client_token_secret(secret: str) -> bool:
    """Whether the secret is taken for a client token's, not an OAuth access token's."""
    return secret.startswith(PREFIX) or not settings.OAUTH_SERVER


def bearer_secret(header: str) -> str:
    scheme, _, secret = header.partition(" ")
    return secret.strip() if scheme.lower() == "bearer" else ""


def resource_metadata_url(request) -> str:
    return request.build_absolute_uri(reverse("mcp_resource_metadata"))


def unauthorized(request, invalid: bool, problem: str = ""):
    challenge = f'Bearer realm="{REALM}", resource_metadata="{resource_metadata_url(request)}"'
    if settings.OAUTH_SERVER:
        challenge += f', scope="{scopes.EVERY_TOOL}"'
    if invalid:
        problem = problem or UNKNOWN
        # RFC 6750's error_description is a quoted string of printable ASCII without quotes or backslashes.
        description = "".join(c for c in problem if " " <= c <= "~" and c not in '"\\')
        challenge += f', error="invalid_token", error_description="{description}"'
        message = f"Unauthorized: {problem}"
    else:
        message = "Unauthorized: send Authorization: Bearer <client token>; tokens are issued in the console"
        if settings.OAUTH_SERVER:
            message += ", or by its OAuth authorization server"
    return rejection(401, message, headers={"WWW-Authenticate": challenge})


def count_request(credential: str, cache=None) -> int:
    """This minute's requests with this credential so far, this one included: a fixed one-minute
    window counted in a cache of its own (settings.CACHES["rate_limits"]), so that every web process agrees.

    incr is atomic in both caches the console uses (a script on Redis: console.cache, LocMemCache under
    its lock); Django's async aincr is not (a get, then a set), and lost counts when processes raced.
    """
    cache, key = cache or rate_cache(), rate_key(credential)
    try:
        return cache.incr(key)
    except ValueError:
        # The window's first request: start it, unless another request just did.
        if cache.add(key, 1, timeout=WINDOW_EXPIRY_SECONDS):
            return 1
        return cache.incr(key)


def forget_requests(credential: str):
    rate_cache().delete(rate_key(credential))


_rate_cache: tuple = (None, None)


def rate_cache():
    """settings.CACHES["rate_limits"], one object for the process while that setting stands.

    Django makes a cache object per thread and per asyncio context, which is every request on an event loop:
    an object made anew, its backend imported by name, for each request's count. Both the counting caches are
    safe to share between threads: LocMemCache locks its entries, and Redis's client keeps a pool.
    """
    global _rate_cache
    configured = caches.settings.get("rate_limits")
    if _rate_cache[0] is not configured:
        _rate_cache = (configured, caches["rate_limits"])
    return _rate_cache[1]


# Longer than a window's key is used: from its first request, at most a minute.
WINDOW_EXPIRY_SECONDS = 61


def rate_key(credential: str) -> str:
    return f"{credential}:{int(time.time() // 60)}"


def too_many_requests(limit: int):
    now = time.time()
    message = f"Too many requests: this token may make {limit} requests a minute"
    return rejection(429, message, headers={"Retry-After": str(max(1, 60 - int(now % 60)))})
