"""Who is calling, and in which era: what every step of one client's request consults."""

from dataclasses import dataclass, field

from approvals.tokens.models import ClientToken


@dataclass
class ClientContext:
    """Who is calling, and in which era, for one request."""

    token: ClientToken
    era: str
    protocol_version: str
    session_id: str = ""
    capabilities: dict = field(default_factory=dict)
    log_level: str | None = None  # set by a legacy client's logging/setLevel
    streaming: bool = False  # the answer is an SSE stream, which can carry requests to the client
    # Why the answer may not be a stream though the client takes one (its token or session holds its most open):
    # a call that would wait for a decision is then refused unrecorded, as the stream would have been.
    unstreamed: str = ""
