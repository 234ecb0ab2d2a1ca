"""A server's refusal of the request's authorization, as the HTTP transport meets it (MCP authorization spec).

401 means no token, or one no longer good; 403 with `insufficient_scope` means a token without the scope the
request needs. Either goes to the spec's Authorizer, once per request: it answers with a token to retry with,
or raises AuthorizationRequired.
"""

from collections.abc import Mapping

from approvals.protocol.oauth_discovery import bearer_challenge

from .errors import AuthorizationRequired
from .spec import ServerSpec


class Refused(AuthorizationRequired):
    """The first refusal of a request: a new token may still get it through."""


def check_refusal(spec: ServerSpec, status: int, headers: Mapping[str, str], method: str) -> None:
    """Raise Refused for an answer of `status` that refuses the request's authorization; `headers` are the
    answer's, looked up without regard to case."""
    challenge = bearer_challenge(headers.get("www-authenticate", ""))
    if status == 401 or (status == 403 and challenge.get("error") == "insufficient_scope"):
        wanted = f" (scope {challenge['scope']!r})" if challenge.get("scope") else ""
        reason = "needs authorization" if status == 401 else "needs a token with more scope"
        raise Refused(
            f"{spec.name}: {method}: HTTP {status}: the server {reason}{wanted}", status=status, challenge=challenge
        )


async def replace(spec: ServerSpec, token: str | None, refused: Refused) -> str:
    """The token to retry with; without an authorizer the refusal stands, as the caller's AuthorizationRequired."""
    if spec.authorizer is None:
        raise AuthorizationRequired(refused.message, status=refused.status, challenge=refused.challenge)
    return await spec.authorizer.rejected(token, refused.status, refused.challenge)
