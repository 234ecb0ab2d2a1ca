"""What an upstream server sends its client: requests mid-call (elicitation, sampling, ping) and notifications."""

import asyncio
import logging

from approvals.protocol import jsonrpc
from approvals.protocol.revisions import MODERN

from .errors import UpstreamError
from .exchange import Exchange, OnRequest
from .listening import ACKNOWLEDGED

log = logging.getLogger(__name__)


async def decline(method: str, params: dict) -> dict:
    """The answer to a server request nobody handles: no to an elicitation, unsupported otherwise."""
    if method == "elicitation/create":
        return {"action": "decline"}
    raise jsonrpc.JsonRpcError(jsonrpc.METHOD_NOT_FOUND, f"{method} is not supported by this client")


class ServerMessages:
    """Mixed into UpstreamSession, whose `_era`, `_in_flight`, `_listening`, `_on_request`, `_on_notification` and
    `spec` these use."""

    async def _gather_input(self, name: str, result: dict, handler: OnRequest) -> dict:
        requests = result.get("inputRequests", {})
        if not isinstance(requests, dict):
            raise UpstreamError(f"{self.spec.name}: tools/call {name}: inputRequests is not an object")
        for key, item in requests.items():
            if (
                not isinstance(item, dict)
                or not isinstance(item.get("method"), str)
                or not isinstance(item.get("params", {}), dict)
            ):
                raise UpstreamError(f"{self.spec.name}: tools/call {name}: input request {key!r} is malformed")

        async def one(key: str, item: dict) -> dict:
            try:
                return await handler(item["method"], item.get("params", {}))
            except jsonrpc.JsonRpcError as exc:
                raise UpstreamError(
                    f"{self.spec.name}: tools/call {name}: input request {key!r} ({item['method']}) "
                    f"was refused: {exc.message}",
                    code=exc.code,
                ) from None

        # All at once: a person may be asked several things, and should see them side by side.
        pending = {key: asyncio.ensure_future(one(key, item)) for key, item in requests.items()}
        try:
            return {key: await task for key, task in pending.items()}
        finally:
            for task in pending.values():
                task.cancel()

    async def _serve(self, message: jsonrpc.Request | jsonrpc.Notification, exchange: Exchange | None) -> dict | None:
        if isinstance(message, jsonrpc.Notification):
            await self._deliver(message, exchange)
            return None
        if self._era == MODERN:
            log.warning(
                "%s: ignored a %s request, which 2026-07-28 servers do not send", self.spec.name, message.method
            )
            return None
        if message.method == "ping":
            return jsonrpc.result(message.id, {})
        # On stdio nothing on the wire ties a server's request to a call; while one call runs it can only be that one's.
        exchange = exchange or self._sole_call()
        handler = (exchange and exchange.on_request) or self._on_request or decline
        try:
            result = await handler(message.method, message.params)
        except jsonrpc.JsonRpcError as exc:
            return jsonrpc.error(message.id, exc)
        except Exception:
            log.exception("%s: answering %s failed", self.spec.name, message.method)
            return jsonrpc.error(
                message.id, jsonrpc.JsonRpcError(jsonrpc.INTERNAL_ERROR, "the client failed to answer")
            )
        if not isinstance(result, dict):
            return jsonrpc.error(
                message.id, jsonrpc.JsonRpcError(jsonrpc.INTERNAL_ERROR, "the client failed to answer")
            )
        return jsonrpc.result(message.id, result)

    def _sole_call(self) -> Exchange | None:
        calls = [e for e in self._in_flight.values() if e.method == "tools/call"]
        return calls[0] if len(calls) == 1 else None

    async def _deliver(self, note: jsonrpc.Notification, exchange: Exchange | None) -> None:
        params = note.params
        if note.method == ACKNOWLEDGED:
            if self._listening is not None:
                self._listening.acknowledged()
            return
        token = params.get("progressToken") if note.method == "notifications/progress" else None
        if exchange is None and token is not None:
            # On stdio nothing but the token ties a notification to its call.
            exchange = next((e for e in self._in_flight.values() if e.progress_token == token), None)
        if exchange is None and note.method in ("notifications/message", "notifications/elicitation/complete"):
            # A log line or an elicitation's completion names no request; with one call running it is that call's.
            exchange = self._sole_call()
        if exchange is not None and token is not None and token == exchange.progress_token:
            exchange.touch()
            params = {**params, "progressToken": exchange.caller_progress_token}
        for handler in (self._on_notification, exchange and exchange.on_notification):
            if handler is None:
                continue
            try:
                await handler(note.method, params)
            except Exception:
                log.exception("%s: a handler of %s failed", self.spec.name, note.method)
