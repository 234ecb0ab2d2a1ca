"""An upstream's URL-elicitation-required error (-32042, 2025-11-25), passed on to a client that can act on it.

A server that needs its user to visit a URL before a call can run refuses the call
with -32042, naming the URLs in `data.elicitations`. The call fails, audited as any
other; a legacy client that declared URL elicitation then gets the very error, opens
the URLs and calls again. Any other client (2026-07-28 retired the code) reads the
same URLs in the tool error, as the text a model can act on.
"""

from approvals.protocol.jsonrpc import URL_ELICITATION_REQUIRED, JsonRpcError
from approvals.protocol.revisions import LEGACY, REVISIONS
from approvals.tokens.context import ClientContext
from approvals.upstream import UpstreamError


def required(exc: UpstreamError) -> list[dict]:
    """The URL elicitations the upstream's error asks for; none unless it is a well-formed -32042."""
    data = exc.data if isinstance(exc.data, dict) else {}
    elicitations = data.get("elicitations")
    if exc.code != URL_ELICITATION_REQUIRED or not isinstance(elicitations, list) or not elicitations:
        return []
    fields = ("url", "message", "elicitationId")
    if not all(isinstance(e, dict) and all(isinstance(e.get(f), str) for f in fields) for e in elicitations):
        return []
    return [{"mode": "url", **{field: e[field] for field in fields}} for e in elicitations]


def error(exc: UpstreamError, elicitations: list[dict]) -> JsonRpcError:
    return JsonRpcError(URL_ELICITATION_REQUIRED, exc.message, {"elicitations": elicitations})


def taken_by(ctx: ClientContext) -> bool:
    """Whether the client's revision has URL elicitation, in the legacy era, and the client declared it."""
    revision = REVISIONS.get(ctx.protocol_version)
    declared = ctx.capabilities.get("elicitation")
    return (
        ctx.era == LEGACY
        and revision is not None
        and revision.url_elicitation
        and isinstance(declared, dict)
        and "url" in declared
    )


def tool_error_text(server: str, tool: str, elicitations: list[dict]) -> str:
    steps = "; ".join(f"{e['message']} Open {e['url']}" for e in elicitations)
    return (
        f"The upstream server {server} needs its user to finish a step in a browser before {tool} can run: "
        f"{steps}. Call {tool} again once it is done."
    )
