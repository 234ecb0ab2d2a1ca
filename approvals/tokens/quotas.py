"""A client token's limits: its own where an admin set one, else the console-wide setting."""

from django.conf import settings

from approvals.tokens.models import ClientToken


def rate_per_minute(token: ClientToken) -> int:
    return settings.MCP_RATE_LIMIT_PER_MINUTE if token.rate_per_minute is None else token.rate_per_minute


def pending_cap(max_pending_calls: int | None) -> int:
    """Calls a token may have waiting for a decision at once; 0 for no cap."""
    return settings.MAX_PENDING_CALLS_PER_TOKEN if max_pending_calls is None else max_pending_calls
