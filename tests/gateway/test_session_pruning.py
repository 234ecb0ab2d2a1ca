from datetime import timedelta

from django.utils import timezone

from approvals.gateway.sessions import close_session, open_session, prune_sessions
from approvals.models import McpSession
from approvals.tokens.credentials import create_token


def test_it_prunes_ended_and_long_idle_sessions_but_keeps_live_ones(db):
    token, _ = create_token("agent")
    fresh = open_session(token, "2025-11-25", {}, {})
    idle = open_session(token, "2025-11-25", {}, {})
    McpSession.objects.filter(pk=idle.pk).update(last_seen_at=timezone.now() - timedelta(days=2))
    ended = open_session(token, "2025-11-25", {}, {})
    close_session(ended)
    assert prune_sessions() == 2
    assert list(McpSession.objects.values_list("pk", flat=True)) == [fresh.pk]
