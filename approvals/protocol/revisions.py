"""The MCP revisions the console speaks, and how a version is agreed."""

from dataclasses import dataclass

LEGACY = "legacy"
MODERN = "modern"


@dataclass(frozen=True)
class Revision:
    version: str
    era: str
    structured_output: bool = False
    elicitation: bool = False
    icons: bool = False
    url_elicitation: bool = False


REVISIONS = {
    r.version: r
    for r in (
        Revision("2025-03-26", LEGACY),
        Revision("2025-06-18", LEGACY, structured_output=True, elicitation=True),
        Revision("2025-11-25", LEGACY, structured_output=True, elicitation=True, icons=True, url_elicitation=True),
        Revision("2026-07-28", MODERN, structured_output=True, elicitation=True, icons=True, url_elicitation=True),
    )
}
# Newest first: the order in which the console proposes versions.
SUPPORTED = sorted(REVISIONS, reverse=True)
LATEST = SUPPORTED[0]
LEGACY_VERSIONS = [v for v in SUPPORTED if REVISIONS[v].era == LEGACY]
MODERN_VERSIONS = [v for v in SUPPORTED if REVISIONS[v].era == MODERN]
LATEST_LEGACY = LEGACY_VERSIONS[0]
# A legacy HTTP request without MCP-Protocol-Version is taken as this revision (2025-06-18 rule).
DEFAULT_LEGACY_HTTP = "2025-03-26"

META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
META_SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
META_LOG_LEVEL = "io.modelcontextprotocol/logLevel"
# RFC 5424 severities, least severe first, as MCP logging names them.
LOG_LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]


def negotiate_legacy(requested: object) -> str:
    """The version a legacy server answers `initialize` with: the client's if known, else our newest legacy one."""
    if isinstance(requested, str) and requested in LEGACY_VERSIONS:
        return requested
    return LATEST_LEGACY
