"""What the HTTP transport asks of whoever holds a server's OAuth tokens; the console's catalog answers it.

The transport knows no database: it asks its Authorizer for a bearer before each request and tells it
about a refusal, and the Authorizer refreshes, records or gives up (raising AuthorizationRequired).
"""

from typing import Protocol


class Authorizer(Protocol):
    async def bearer(self) -> str | None:
        """The access token to send, refreshed if it is about to expire; None sends none."""

    async def rejected(self, token: str | None, status: int, challenge: dict) -> str:
        """The server refused `token` (401, or 403 with insufficient_scope): a new token to retry with once,
        or AuthorizationRequired when none can be had without a person."""
