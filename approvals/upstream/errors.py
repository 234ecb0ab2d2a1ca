"""The one error the upstream client raises."""

from typing import Any


class UpstreamError(Exception):
    """Something went wrong talking to an upstream server.

    `retryable` says whether the same request may succeed later (timeouts,
    refused connections, dead children, HTTP 5xx); `code` is the JSON-RPC error
    code when the server answered with one, and `data` that error's data.
    """

    def __init__(self, message: str, *, retryable: bool = False, code: int | None = None, data: Any = None):
        super().__init__(message)
        self.message = message
        self.retryable = retryable
        self.code = code
        self.data = data

    def __repr__(self):
        return f"UpstreamError({self.message!r}, retryable={self.retryable}, code={self.code})"


class AuthorizationRequired(UpstreamError):
    """The server refused the request's authorization (401, or 403 insufficient_scope) and no token helps now.

    `status` is the HTTP status, `challenge` the parsed WWW-Authenticate parameters (lower-case names), and
    `scope` the scope the server asked for, when it named one.
    """

    def __init__(self, message: str, *, status: int = 401, challenge: dict | None = None):
        super().__init__(message, retryable=False)
        self.status = status
        self.challenge = challenge or {}
        self.scope = self.challenge.get("scope", "")
