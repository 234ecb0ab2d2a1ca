"""Throttling sign-ins, per username and per address, in a cache of their own.

Every try is counted before its password is checked, against the name tried and the
address it came from, for SIGNIN_LOCKOUT_SECONDS from the window's first try. The
count is an atomic increment (Redis INCR, LocMemCache under its lock), so tries that
arrive together each get a number of their own: in a burst of guesses, those past a
limit (SIGNIN_FAILURES_PER_USERNAME, SIGNIN_FAILURES_PER_ADDRESS) are refused before
any password is checked, the right one included, while the first ones are still being
checked. A failed try stays counted; a sign-in takes its try back from the address and
clears the name's count; a refused try is taken back from whichever of the two did
not refuse it.

When a count reaches its limit on a failure, or a try finds itself past it, a lockout of
that name or address starts and lasts SIGNIN_LOCKOUT_SECONDS. It is set with an atomic
add, so exactly one try starts it, and that try alone writes `user.login_locked`: the
burst is audited once, not once per try.

The counters live in the "signin" cache (settings.CACHES): in production Redis, which
every web process shares and which expires them by itself, under a prefix of their own;
embedded, a LocMemCache with room to spare. Nothing else writes to it, so no other
traffic (unknown bearer tokens on /mcp, sessions) can evict a count or a lockout.
"""

import contextlib
import hashlib
import time
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import caches

CACHE = "signin"
PREFIX = "signin-throttle"
# Where the sign-in form leaves the try it counted, on the request, for the signals that end it.
COUNTED = "signin_try"
# An increment fails only when the key expired right after it was added; past this many, something else is wrong.
INCREMENT_ATTEMPTS = 3


def counters():
    return caches[CACHE]


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


def increment(cache, key: str, window: float) -> int:
    """Count one more in the window that `key` holds, starting it if it is not there."""
    for _ in range(INCREMENT_ATTEMPTS):
        cache.add(key, 0, timeout=window)
        try:
            return cache.incr(key)
        except ValueError:
            continue
    raise RuntimeError(f"the sign-in cache lost {key} {INCREMENT_ATTEMPTS} times in a row")


@dataclass(frozen=True)
class Try:
    """One sign-in try, counted: (kind, key stem, limit, its number in the window) for each subject."""

    username: str
    address: str
    counts: tuple[tuple[str, str, int, int], ...]

    def past_limits(self) -> list[str]:
        return [kind for kind, _, limit, count in self.counts if count > limit]


def count_try(username: str, address: str) -> Try:
    """Count a try before its password is checked."""
    cache, window = counters(), settings.SIGNIN_LOCKOUT_SECONDS
    counts = tuple(
        (kind, stem, limit, increment(cache, f"{stem}:tries", window))
        for kind, stem, limit in subjects(username, address)
    )
    return Try(username, address, counts)


def seconds_locked(username: str, address: str) -> float:
    """How long this name or address stays locked out; 0 when neither is."""
    now = time.time()
    until = [counters().get(f"{stem}:locked") or 0 for _, stem, _ in subjects(username, address)]
    return max([0.0, *(moment - now for moment in until)])


def lock(counted: Try, kinds: list[str]) -> list[str]:
    """Start the lockouts of these kinds; those this very call started."""
    window = settings.SIGNIN_LOCKOUT_SECONDS
    cache = counters()
    return [
        kind
        for kind, stem, _, _ in counted.counts
        if kind in kinds and cache.add(f"{stem}:locked", time.time() + window, timeout=window)
    ]


def note_refused(counted: Try):
    """A try refused unchecked: it stays counted against what refused it (a lockout, or a count past its limit)
    and is taken back from the rest, which it never tried: a name hammered while locked out does not lock out
    the address it comes from."""
    cache = counters()
    for _, stem, limit, count in counted.counts:
        if count <= limit and not cache.get(f"{stem}:locked"):
            take_back(cache, f"{stem}:tries")


def note_unchecked(counted: Try):
    """A try whose credential turned out never to be checked (a request refused for another reason first): taken
    back from all it counted against, and never taken for a success, which would clear the name's count."""
    cache = counters()
    for _, stem, _, _ in counted.counts:
        take_back(cache, f"{stem}:tries")


def note_failure(username: str, address: str, counted: Try | None = None) -> list[str]:
    """A wrong password (counted by the form, else counted now); the kinds whose lockout this try started."""
    counted = counted or count_try(username, address)
    return lock(counted, [kind for kind, _, limit, count in counted.counts if count >= limit])


def note_success(username: str, counted: Try | None = None):
    """A good password clears the name's count; its address keeps counting, less this try."""
    cache = counters()
    for _, stem, _ in subjects(username, ""):
        cache.delete(f"{stem}:tries")
    for kind, stem, _, _ in counted.counts if counted else ():
        if kind == "address":
            take_back(cache, f"{stem}:tries")


def take_back(cache, key: str):
    # A window that ended meanwhile has nothing to take back: decr refuses a key that is gone. One started afresh since
    # holds tries of its own only, so taking back the tries of the window before may bring it below zero: drop it then.
    with contextlib.suppress(ValueError):
        if cache.decr(key) < 0:
            cache.delete(key)
