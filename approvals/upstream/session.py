"""One session with one upstream server: negotiation, tool calls and ping; the rest of its surface is in
surface_requests.py, what the server sends the console in serving.py."""

import asyncio
import itertools
import logging
from contextlib import asynccontextmanager
from typing import Any

from approvals.protocol import headers as mcp_headers
from approvals.protocol import jsonrpc
from approvals.protocol.revisions import (
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
    MODERN,
)
from approvals.protocol.tools import x_mcp_header_scan

from .errors import UpstreamError
from .exchange import Exchange, OnNotification, OnRequest
from .listening import Listening, list_flags
from .negotiation import CLIENT_INFO, Negotiation
from .serving import ServerMessages, decline
from .spec import HTTP, STDIO, ServerIdentity, ServerSpec
from .surface_requests import SurfaceRequests
from .tasks import TaskCalls, requires_task
from .transport_http import HttpTransport
from .transport_stdio import StdioTransport

log = logging.getLogger(__name__)


# Declared only when someone will answer: a server must not ask a client that cannot.
ANSWERING_CAPABILITIES = {"elicitation": {"form": {}, "url": {}}, "sampling": {}}
MAX_INPUT_ROUNDS = 10


class UpstreamSession(Negotiation, SurfaceRequests, ServerMessages, TaskCalls):
    def __init__(
        self, spec: ServerSpec, *, on_request: OnRequest | None = None, on_notification: OnNotification | None = None
    ):
        if spec.transport not in (HTTP, STDIO):
            raise UpstreamError(f"{spec.name}: unknown transport {spec.transport!r}")
        self.spec = spec
        self.identity: ServerIdentity | None = None
        self._on_request = on_request
        self._on_notification = on_notification
        self._capabilities = ANSWERING_CAPABILITIES if on_request else {}
        transport_class = HttpTransport if spec.transport == HTTP else StdioTransport
        self._transport = transport_class(spec, self._serve)
        self._era: str | None = None  # set while negotiating, so requests are shaped for the era being tried
        self._version: str | None = None
        self._ids = itertools.count(1)
        self._progress_tokens = itertools.count(1)
        self._in_flight: dict[int, Exchange] = {}
        self._tasks: set[asyncio.Task] = set()
        self._closed = False
        self._listening: Listening | None = None

    @property
    def stderr_tail(self) -> str:
        return self._transport.stderr_tail

    @property
    def alive(self) -> bool:
        return not self._closed and self._transport.alive

    async def open(self) -> None:
        await self._transport.start()
        self.identity = await self._negotiate()
        if self._era == MODERN and self._on_notification is not None:
            flags = list_flags(self.identity.capabilities)
            self._listening = Listening(self.spec.name, self._listen, flags, self.spec.timeout)
            await self._listening.start()

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._listening is not None:
            await self._listening.close()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._transport.close()

    async def call_tool(
        self,
        name: str,
        arguments: dict,
        *,
        tool: dict | None = None,
        progress_token: Any = None,
        on_notification: OnNotification | None = None,
        on_request: OnRequest | None = None,
        log_level: str | None = None,
        task_ttl_ms: int = 3_600_000,
    ) -> dict:
        """The raw CallToolResult; input the server asks for on the way goes to on_request.

        Pass `tool` (its definition from tools/list) so its x-mcp-header
        parameters travel as headers, and a tool that requires tasks runs as one
        (upstream.tasks), kept by the server for `task_ttl_ms`. `on_request` and
        `on_notification` here receive what belongs to this call; the session's
        ones also see its notifications. `log_level` asks a 2026-07-28 server for
        log messages during this call (older servers log at the session's level).
        """
        params: dict = {"name": name, "arguments": arguments}
        headers = self._param_headers(tool, arguments)
        meta: dict = {}
        upstream_token = None
        if progress_token is not None:
            # Our own token, so that two callers' tokens can never collide on one upstream session.
            upstream_token = next(self._progress_tokens)
            meta["progressToken"] = upstream_token
        if log_level is not None and self._era == MODERN:
            meta[META_LOG_LEVEL] = log_level
        if meta:
            params["_meta"] = meta
        handler = on_request or self._on_request or decline
        if requires_task(tool) and self._era != MODERN:
            return await self._call_as_task(
                name, params, headers, ttl_ms=task_ttl_ms, on_request=handler, on_notification=on_notification
            )
        for _ in range(MAX_INPUT_ROUNDS + 1):
            result = await self._request(
                "tools/call",
                params,
                headers=headers,
                progress_token=upstream_token,
                caller_progress_token=progress_token,
                on_request=on_request,
                on_notification=on_notification,
            )
            if result.get("resultType") != "input_required":
                return self._complete(result, f"tools/call {name}")
            params = {**params, "inputResponses": await self._gather_input(name, result, handler)}
            params.pop("requestState", None)
            if "requestState" in result:
                params["requestState"] = result["requestState"]
        raise UpstreamError(
            f"{self.spec.name}: tools/call {name} still asked for input after {MAX_INPUT_ROUNDS} rounds"
        )

    async def _listen(self, wanted: dict) -> dict:
        return await self._request("subscriptions/listen", {"notifications": wanted})

    async def ping(self) -> None:
        # 2026-07-28 has no ping; discovery is the cheapest request every modern server answers.
        if self._era == MODERN:
            await self._request("server/discover", {})
        else:
            await self._request("ping", {})

    async def _request(self, method: str, params: dict, *, headers: dict | None = None, **routing) -> dict:
        """Send one request and return its result; `routing` says where messages that belong to it go (see Exchange)."""
        msg_id = next(self._ids)
        call = Exchange(msg_id, method, **routing)
        all_headers = dict(headers or {})
        if self._era == MODERN:
            meta = {
                **params.get("_meta", {}),
                META_PROTOCOL_VERSION: self._version,
                META_CLIENT_CAPABILITIES: self._capabilities,
                META_CLIENT_INFO: CLIENT_INFO,
            }
            params = {**params, "_meta": meta}
            all_headers.update(mcp_headers.request_headers(self._version, method, params))
        self._in_flight[msg_id] = call
        try:
            response = await self._transport.request(jsonrpc.request(msg_id, method, params), all_headers, call)
        except asyncio.CancelledError:
            self._cancel_upstream(msg_id, method)
            raise
        except UpstreamError as exc:
            if exc.retryable:  # we stop waiting; a refusal needs no cancelling
                self._cancel_upstream(msg_id, method)
            raise
        finally:
            del self._in_flight[msg_id]
        if response.error is not None:
            error = response.error
            raise UpstreamError(
                f"{self.spec.name}: {method}: {error.message} (JSON-RPC {error.code})", code=error.code, data=error.data
            )
        return response.result

    def _cancel_upstream(self, msg_id: int, method: str) -> None:
        """Tell the server we stopped waiting, where the era has words for it.

        A modern HTTP stream's closing says it by itself.
        """
        if method in ("initialize", "server/discover") or not self._transport.alive:
            return
        if self._era == MODERN and self.spec.transport == HTTP:
            return
        note = jsonrpc.notification(
            "notifications/cancelled", {"requestId": msg_id, "reason": "the console stopped waiting"}
        )
        task = asyncio.create_task(self._send_quietly(note))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _send_quietly(self, note: dict) -> None:
        try:
            await self._transport.notify(note, {})
        except UpstreamError as exc:
            log.info("%s: could not send %s: %s", self.spec.name, note["method"], exc.message)

    def _complete(self, result: dict, what: str) -> dict:
        kind = result.get("resultType", "complete")
        if kind != "complete":
            raise UpstreamError(
                f"{self.spec.name}: answered {what} with resultType {kind!r}, which this client does not take"
            )
        return result

    def _param_headers(self, tool: dict | None, arguments: dict) -> dict[str, str]:
        if tool is None or self._era != MODERN or self.spec.transport != HTTP:
            return {}
        declared, problems = x_mcp_header_scan(tool)
        if problems:
            raise UpstreamError(f"{self.spec.name}: tool {tool.get('name')!r} cannot be called: {'; '.join(problems)}")
        try:
            return mcp_headers.param_headers(declared, arguments)
        except ValueError as exc:
            raise UpstreamError(f"{self.spec.name}: tool {tool.get('name')!r} cannot be called: {exc}") from None


async def connect(
    spec: ServerSpec, *, on_request: OnRequest | None = None, on_notification: OnNotification | None = None
) -> UpstreamSession:
    """An open session, for the pool; close it with aclose(). Elsewhere prefer open_session()."""
    session = UpstreamSession(spec, on_request=on_request, on_notification=on_notification)
    try:
        await session.open()
    except BaseException:
        await session.aclose()
        raise
    return session


@asynccontextmanager
async def open_session(
    spec: ServerSpec, *, on_request: OnRequest | None = None, on_notification: OnNotification | None = None
):
    session = await connect(spec, on_request=on_request, on_notification=on_notification)
    try:
        yield session
    finally:
        await session.aclose()
