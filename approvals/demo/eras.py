"""Which protocol era each request speaks, and how the two eras open and stamp their answers.

The client's first successful request settles a connection's era: `initialize`
opens a legacy connection (2025-03-26, 2025-06-18, 2025-11-25); a request whose
`_meta` carries the 2026-07-28 envelope opens a modern one. Later requests must
keep to it.
"""

import logging
from dataclasses import dataclass, field

from approvals.protocol.jsonrpc import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    UNSUPPORTED_PROTOCOL_VERSION,
    JsonRpcError,
    Request,
)
from approvals.protocol.revisions import (
    LEGACY,
    META_CLIENT_CAPABILITIES,
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
    MODERN,
    MODERN_VERSIONS,
    REVISIONS,
    SUPPORTED,
    negotiate_legacy,
)

logger = logging.getLogger("approvals.demo")

SERVER_INFO = {
    "name": "customer-records-demo",
    "title": "Customer Records (demo)",
    "version": "1.0.0",
    "description": "An in-memory customer and order service for trying out the MCP Approval Console.",
}
INSTRUCTIONS = (
    "Customer ids look like C007 and order ids like O1012. Use lookup_customer and search_orders to find "
    "records before changing them; issue_refund asks a person to confirm the amount."
)
CAPABILITIES = {"tools": {"listChanged": False}}
CACHE_HINTS = {"ttlMs": 60_000, "cacheScope": "public"}


@dataclass(frozen=True)
class Exchange:
    """What one request runs under: its era, revision and the capabilities its client declared."""

    era: str
    version: str | None = None
    capabilities: dict = field(default_factory=dict)
    progress_token: str | int | None = None

    @property
    def can_elicit(self) -> bool:
        declared = self.capabilities.get("elicitation")
        # An empty elicitation capability means form mode, as it did before modes existed.
        form = isinstance(declared, dict) and ("form" in declared or "url" not in declared)
        return form and REVISIONS[self.version].elicitation


def _progress_token(params: dict) -> str | int | None:
    meta = params.get("_meta")
    token = meta.get("progressToken") if isinstance(meta, dict) else None
    return token if isinstance(token, (str, int)) and not isinstance(token, bool) else None


class Connection:
    def __init__(self):
        self.era: str | None = None
        self.version: str | None = None
        self.client_capabilities: dict = {}

    def route(self, request: Request) -> Exchange:
        """Settle the era of `request`, fixing the connection's era on its first request."""
        if request.method == "initialize":
            if self.era == MODERN:
                # The code a dual-era client reads as "this connection is modern; here are its versions".
                data = {"supported": MODERN_VERSIONS}
                if isinstance(request.params.get("protocolVersion"), str):
                    data["requested"] = request.params["protocolVersion"]
                raise JsonRpcError(
                    UNSUPPORTED_PROTOCOL_VERSION, "This connection speaks 2026-07-28, which has no initialize", data
                )
            return Exchange(LEGACY)
        meta = request.params.get("_meta")
        if isinstance(meta, dict) and META_PROTOCOL_VERSION in meta:
            if self.era == LEGACY:
                raise JsonRpcError(
                    INVALID_REQUEST,
                    "Invalid request: this connection was initialized with "
                    f"{self.version}, so requests may not carry the 2026-07-28 _meta envelope",
                )
            exchange = self._modern(meta, _progress_token(request.params))
            self.era = MODERN
            return exchange
        if self.era == MODERN:
            raise JsonRpcError(
                INVALID_PARAMS,
                f"Invalid params: on a 2026-07-28 connection params._meta must carry "
                f"{META_PROTOCOL_VERSION} and {META_CLIENT_CAPABILITIES}",
            )
        if self.era is None and request.method != "ping":
            raise JsonRpcError(
                INVALID_REQUEST,
                "Invalid request: send initialize first (2025 revisions), or carry "
                f"{META_PROTOCOL_VERSION} in params._meta (2026-07-28)",
            )
        return Exchange(LEGACY, self.version, self.client_capabilities, _progress_token(request.params))

    @staticmethod
    def _modern(meta: dict, progress_token: str | int | None) -> Exchange:
        version = meta[META_PROTOCOL_VERSION]
        if not isinstance(version, str):
            raise JsonRpcError(INVALID_PARAMS, f"Invalid params: {META_PROTOCOL_VERSION} must be a string")
        if version not in MODERN_VERSIONS:
            hint = "; it is spoken after initialize, without the _meta envelope" if version in REVISIONS else ""
            raise JsonRpcError(
                UNSUPPORTED_PROTOCOL_VERSION,
                f"Unsupported protocol version: {version}{hint}",
                {"supported": SUPPORTED, "requested": version},
            )
        capabilities = meta.get(META_CLIENT_CAPABILITIES)
        if not isinstance(capabilities, dict):
            raise JsonRpcError(
                INVALID_PARAMS,
                f"Invalid params: params._meta must carry {META_CLIENT_CAPABILITIES} "
                "as an object ({} when the client has none)",
            )
        return Exchange(MODERN, version, capabilities, progress_token)

    def initialize(self, params: dict, _: Exchange) -> dict:
        if self.era == LEGACY:
            raise JsonRpcError(INVALID_REQUEST, "Invalid request: this connection is already initialized")
        requested, capabilities = params.get("protocolVersion"), params.get("capabilities", {})
        if not isinstance(requested, str) or not isinstance(capabilities, dict):
            raise JsonRpcError(
                INVALID_PARAMS,
                "Invalid params: initialize needs protocolVersion (a string) and capabilities (an object)",
            )
        self.era, self.version, self.client_capabilities = LEGACY, negotiate_legacy(requested), capabilities
        logger.info("initialized: the client asked for %s, speaking %s", requested, self.version)
        return {
            "protocolVersion": self.version,
            "capabilities": {**CAPABILITIES, "logging": {}},
            "serverInfo": SERVER_INFO,
            "instructions": INSTRUCTIONS,
        }

    @staticmethod
    def discover(_: dict, __: Exchange) -> dict:
        return {
            "supportedVersions": SUPPORTED,
            "capabilities": CAPABILITIES,
            "instructions": INSTRUCTIONS,
            **CACHE_HINTS,
        }

    @staticmethod
    def finish(value: dict, exchange: Exchange) -> dict:
        """Stamp a modern result with its resultType and our identity; legacy results pass unchanged."""
        if exchange.era != MODERN:
            return value
        return {"resultType": "complete", **value, "_meta": {**value.get("_meta", {}), META_SERVER_INFO: SERVER_INFO}}
