from datetime import timedelta
from unittest.mock import patch

from django.utils import timezone

from approvals.actions.mcp_sessions import holder, prune_sessions
from approvals.gateway.sessions import close_session, open_session
from approvals.tokens.credentials import create_token
from approvals.tokens.models import McpSession


def test_it_prunes_ended_and_long_idle_sessions_but_keeps_live_ones(db):
    token, _ = create_token("agent")
    fresh = open_session(token, "2025-11-25", {}, {})
    idle = open_session(token, "2025-11-25", {}, {})
    McpSession.objects.filter(pk=idle.pk).update(last_seen_at=timezone.now() - timedelta(days=2))
    ended = open_session(token, "2025-11-25", {}, {})
    close_session(ended)
    assert prune_sessions() == 2
    assert list(McpSession.objects.values_list("pk", flat=True)) == [fresh.pk]


def test_pruning_an_idle_session_lets_go_of_its_resource_subscriptions_in_every_process(db):
    token, _ = create_token("agent")
    subscribed = open_session(token, "2025-11-25", {}, {})
    open_session(token, "2025-11-25", {}, {})
    McpSession.objects.update(last_seen_at=timezone.now() - timedelta(days=2))
    McpSession.objects.filter(pk=subscribed.pk).update(resource_subscriptions=["docs://readme"])

    with patch("approvals.actions.mcp_sessions.events.subscriptions_released") as released:
        assert prune_sessions() == 2

    released.assert_called_once_with(holder(subscribed.pk))
