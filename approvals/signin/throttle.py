"""Throttling failed sign-ins, per username and per address, in the shared cache.

Each failed sign-in counts against the name tried and against the address it came
from, for SIGNIN_LOCKOUT_SECONDS from the first failure. When a count reaches its
limit (SIGNIN_FAILURES_PER_USERNAME, SIGNIN_FAILURES_PER_ADDRESS) a lockout of that
name or address starts and lasts SIGNIN_LOCKOUT_SECONDS; while it lasts the sign-in
form refuses before any password is checked. The lockout is set with an atomic
add, so exactly one try starts it, and that try alone writes `user.login_locked`:
the burst is audited once, not once per try. Counts live in the cache (Redis in
production), which every web process shares and which expires them by itself.
"""

import hashlib
import time

from django.conf import settings
from django.core.cache import cache

PREFIX = "signin-throttle"


def subjects(username: str, address: str) -> list[tuple[str, str, int]]:
    """(kind, cache key stem, limit) of what a try counts against."""
    tried = []
    if username:
        tried.append(("username", username.casefold(), settings.SIGNIN_FAILURES_PER_USERNAME))
    if address:
        tried.append(("address", address, settings.SIGNIN_FAILURES_PER_ADDRESS))
    # Hashed: a name tried may be a password typed in the wrong field, and cache keys are visible in Redis.
    return [
        (kind, f"{PREFIX}:{kind}:{hashlib.sha256(value.encode()).hexdigest()[:40]}", limit)
        for kind, value, limit in tried
    ]


def seconds_locked(username: str, address: str) -> float:
    """How long this name or address stays locked out; 0 when neither is."""
    now = time.time()
    until = [cache.get(f"{stem}:locked") or 0 for _, stem, _ in subjects(username, address)]
    return max([0.0, *(moment - now for moment in until)])


def note_failure(username: str, address: str) -> list[str]:
    """Count a failed try; the kinds ("username", "address") whose lockout this very try started."""
    window = settings.SIGNIN_LOCKOUT_SECONDS
    started = []
    for kind, stem, limit in subjects(username, address):
        key = f"{stem}:failures"
        cache.add(key, 0, timeout=window)
        try:
            count = cache.incr(key)
        except ValueError:
            # Expired between the add and the increment: this failure starts a new window.
            cache.set(key, 1, timeout=window)
            count = 1
        if count >= limit and cache.add(f"{stem}:locked", time.time() + window, timeout=window):
            started.append(kind)
    return started


def note_success(username: str):
    """A good password clears the name's failures; its address keeps counting."""
    for _, stem, _ in subjects(username, ""):
        cache.delete(f"{stem}:failures")
