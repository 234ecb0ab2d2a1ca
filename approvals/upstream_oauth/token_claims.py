"""One process at a time renews a connection's token, and no transaction is held while it asks.

A token request may take up to UPSTREAM_TIMEOUT_SECONDS, and on SQLite every transaction holds the one write
lock of the whole console: so the renewer claims the grant with a lease (one conditional UPDATE), asks outside
any transaction, and keeps the answer only if the claim is still its own. A rotating refresh token spent twice
can make the authorization server revoke the whole family, so the others wait for the outcome, polling the row,
and use the token it brought; a renewer that died leaves a lease that runs out.
"""

import secrets
import time
from collections.abc import Callable
from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from approvals.upstream import UpstreamError
from approvals.upstream_oauth.models import UpstreamGrant

# Beyond the token request's own bound: the writes before and after it.
LEASE_MARGIN = timedelta(seconds=10)
POLL_SECONDS = 0.1


def lease() -> timedelta:
    return timedelta(seconds=settings.UPSTREAM_TIMEOUT_SECONDS) + LEASE_MARGIN


def claim(grant_pk: int) -> str | None:
    """This process's claim on renewing the grant's token; None while another process holds a live one."""
    now, mine = timezone.now(), secrets.token_hex(16)
    free = Q(refreshing_until__isnull=True) | Q(refreshing_until__lte=now)
    taken = UpstreamGrant.objects.filter(free, pk=grant_pk).update(refresh_claim=mine, refreshing_until=now + lease())
    return mine if taken else None


def release(grant_pk: int, mine: str) -> None:
    UpstreamGrant.objects.filter(pk=grant_pk, refresh_claim=mine).update(refresh_claim="", refreshing_until=None)


def claimed(grant_pk: int, mine: str) -> UpstreamGrant:
    """The grant locked for the renewer to store its outcome in, in the caller's (short) transaction;
    UpstreamError when the claim ran out and another process took it, whose outcome stands."""
    grant = UpstreamGrant.objects.select_for_update(of=("self",)).select_related("server", "user").get(pk=grant_pk)
    if grant.refresh_claim != mine:
        raise UpstreamError(f"renewing the token of {grant.server.name} took longer than its lease; try again")
    grant.refresh_claim, grant.refreshing_until = "", None
    return grant


def renewed(
    grant_pk: int,
    settled: Callable[[UpstreamGrant], str | None],
    renew: Callable[[UpstreamGrant, str], str],
) -> str:
    """The grant's token once renewed: `settled(grant)` is the token when none is needed (raising when no
    renewal can help); else `renew(grant, claim)` runs, outside any transaction, in the one process holding
    the claim, while the others wait for its outcome. The claim is let go however `renew` ends."""
    deadline = time.monotonic() + lease().total_seconds()
    while True:
        mine = claim(grant_pk)
        grant = UpstreamGrant.objects.select_related("server", "user").get(pk=grant_pk)
        try:
            token = settled(grant)
            if token is not None:
                return token
            if mine is not None:
                return renew(grant, mine)
        finally:
            if mine is not None:
                release(grant_pk, mine)
        if time.monotonic() > deadline:
            raise UpstreamError(f"another process is still renewing the token of {grant.server.name}; try again")
        time.sleep(POLL_SECONDS)
