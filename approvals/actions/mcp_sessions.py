"""Legacy MCP sessions' upkeep, below the gateway that opens them: the stale ones pruned, their subscriptions let go.

A session that ended, or that nobody used for a day, is deleted unless a call of its own still runs. A client
that returns after that starts over with initialize, as the spec tells it to when its session is unknown (404).
"""

from datetime import timedelta

from django.utils import timezone

from approvals.calls.models import Call
from approvals.live import events
from approvals.tokens.models import McpSession


def holder(session_id: str) -> str:
    """How the upstream session pools name this session as the holder of its resource subscriptions."""
    return f"session:{session_id}"


def prune_sessions(idle=timedelta(days=1)) -> int:
    """Delete sessions that ended, or that nobody used for `idle`, unless a call of theirs still runs."""
    cutoff = timezone.now() - idle
    live_sessions = Call.objects.filter(status__in=Call.OPEN).values("session_id")
    stale = McpSession.objects.filter(last_seen_at__lt=cutoff) | McpSession.objects.filter(closed_at__isnull=False)
    stale = stale.exclude(pk__in=live_sessions)
    # An idle session's subscriptions go with it, wherever they are held upstream.
    for session_id in (
        stale.filter(closed_at__isnull=True).exclude(resource_subscriptions=[]).values_list("pk", flat=True)
    ):
        events.subscriptions_released(holder(session_id))
    deleted, _ = stale.delete()
    return deleted
