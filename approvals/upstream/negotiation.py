"""Negotiating a session's era and revision: server/discover first, else initialize, or the other way round."""

from typing import Any

from approvals.protocol import identity, jsonrpc
from approvals.protocol.revisions import (
    LATEST_LEGACY,
    LEGACY,
    LEGACY_VERSIONS,
    META_SERVER_INFO,
    MODERN,
    MODERN_VERSIONS,
    REVISIONS,
)

from .errors import AuthorizationRequired, UpstreamError
from .spec import ServerIdentity

CLIENT_INFO = {"name": identity.NAME, "version": identity.version()}


class _NoCommonRevision(UpstreamError):
    """The server named the revisions it speaks, and none is ours: trying the other era cannot help."""


class Negotiation:
    """Mixed into UpstreamSession, whose `_request`, `_transport`, `_capabilities` and `spec` these use."""

    async def _negotiate(self) -> ServerIdentity:
        attempts = [self._discover, self._initialize]
        if self.spec.revision in LEGACY_VERSIONS:
            attempts.reverse()
        refusals = []
        for attempt in attempts:
            try:
                return await attempt()
            except (_NoCommonRevision, AuthorizationRequired):
                # A refusal of the console's authorization says nothing of the era: every request would meet it.
                raise
            except UpstreamError as exc:
                # Only a refusal is a verdict on the era; a server we cannot reach is just down.
                if exc.retryable:
                    raise
                refusals.append(exc)
        raise UpstreamError(
            f"{self.spec.name}: speaks no revision this client does: " + "; ".join(exc.message for exc in refusals),
            code=refusals[-1].code,
        )

    async def _discover(self) -> ServerIdentity:
        self._era, self._version = MODERN, MODERN_VERSIONS[0]
        try:
            result = await self._request("server/discover", {})
        except UpstreamError as exc:
            supported = exc.data.get("supported") if isinstance(exc.data, dict) else None
            if (
                exc.code == jsonrpc.UNSUPPORTED_PROTOCOL_VERSION
                and isinstance(supported, list)
                and not any(v in REVISIONS for v in supported)
            ):
                raise _NoCommonRevision(
                    f"{self.spec.name}: speaks only {supported}, none of which this client does", code=exc.code
                ) from None
            raise
        supported = result.get("supportedVersions")
        version = next((v for v in MODERN_VERSIONS if isinstance(supported, list) and v in supported), None)
        if version is None:
            raise UpstreamError(
                f"{self.spec.name}: server/discover offers no modern revision this client speaks ({supported!r})"
            )
        self._version = version
        meta = result.get("_meta")
        server_info = meta.get(META_SERVER_INFO) if isinstance(meta, dict) else None
        return self._identity(version, MODERN, server_info, result)

    async def _initialize(self) -> ServerIdentity:
        self._era, self._version = LEGACY, None
        offered = self.spec.revision if self.spec.revision in LEGACY_VERSIONS else LATEST_LEGACY
        result = await self._request(
            "initialize", {"protocolVersion": offered, "capabilities": self._capabilities, "clientInfo": CLIENT_INFO}
        )
        version = result.get("protocolVersion")
        if version not in LEGACY_VERSIONS:
            await self._transport.end_session()
            raise UpstreamError(
                f"{self.spec.name}: initialize answered with protocol version {version!r}, "
                "which this client does not speak"
            )
        self._version = self._transport.legacy_version = version
        await self._transport.notify(jsonrpc.notification("notifications/initialized"), {})
        if self._on_notification is not None:
            await self._transport.start_listening()
        return self._identity(version, LEGACY, result.get("serverInfo"), result)

    def _identity(self, version: str, era: str, server_info: Any, result: dict) -> ServerIdentity:
        capabilities, instructions = result.get("capabilities", {}), result.get("instructions", "")
        if (
            not isinstance(server_info, dict | None)
            or not isinstance(capabilities, dict)
            or not isinstance(instructions, str | None)
        ):
            raise UpstreamError(
                f"{self.spec.name}: described itself in malformed terms (serverInfo, capabilities or instructions)"
            )
        return ServerIdentity(version, era, server_info or {}, capabilities, instructions or "")
