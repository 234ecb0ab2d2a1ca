"""Streamable HTTP toward an upstream server, over aiohttp: one POST per message, JSON or SSE answers."""

import asyncio
import contextlib
import logging

import aiohttp
from yarl import URL

from approvals.protocol import jsonrpc

from . import bearer_auth, http_client
from .errors import UpstreamError
from .exchange import MAX_MESSAGE_BYTES, Exchange, Serve, parse
from .http_client import NETWORK_ERRORS, content_type, read_clock_stopped
from .spec import ServerSpec
from .sse import SseError, SseParser

log = logging.getLogger(__name__)

MAX_ERROR_BODY_BYTES = 64 * 1024
# Reconnections in a row that brought no new event before a stream is given up.
MAX_RESUMES = 3
JSON = "application/json"
EVENT_STREAM = "text/event-stream"


class HttpTransport:
    stderr_tail = ""

    def __init__(self, spec: ServerSpec, serve: Serve):
        self.spec = spec
        self.alive = True
        self.session_id: str | None = None  # legacy era: Mcp-Session-Id from the initialize answer
        self.legacy_version: str | None = None  # legacy era: sent as MCP-Protocol-Version once initialized
        self._serve = serve
        self._listener: asyncio.Task | None = None
        self._bearer: str | None = None  # the OAuth access token, when the server's spec has an authorizer
        self._url: URL | None = None  # the spec's URL, parsed once by start() rather than on every request
        # Made by start(), on the event loop that uses it: an aiohttp session belongs to the loop it was made on.
        self._client: aiohttp.ClientSession | None = None
        # Responses whose stream brought its answer and has yet to end (http_client.Released).
        self._lingering: set[aiohttp.ClientResponse] = set()

    async def start(self) -> None:
        """Check what the admin configured, so a mistake reads as one rather than as an outage."""
        try:
            self._url = URL(self.spec.url)
            for text in (*self.spec.headers, *self.spec.headers.values()):
                text.encode("ascii")  # as HTTP/1.1 carries them
        except (ValueError, UnicodeError) as exc:
            raise UpstreamError(f"{self.spec.name}: the URL or a header is not valid: {exc}") from None
        if self._url.scheme not in ("http", "https") or not self._url.host:
            raise UpstreamError(f"{self.spec.name}: the URL {self.spec.url!r} is not an http(s) URL")
        if any(c in value for value in self.spec.headers.values() for c in "\r\n\0"):
            raise UpstreamError(f"{self.spec.name}: a configured header value holds a line break")
        self._client = http_client.client(self.spec, self._url)

    async def request(self, message: dict, headers: dict[str, str], exchange: Exchange) -> jsonrpc.Response:
        if self.spec.authorizer is not None:
            # Cheap while the token is far from its expiry: the authorizer keeps it in memory.
            self._bearer = await self.spec.authorizer.bearer()
        # A refused token is replaced once (refreshed, or stepped up); a second refusal is the caller's to see.
        try:
            return await self._request(message, headers, exchange)
        except bearer_auth.Refused as refused:
            self._bearer = await bearer_auth.replace(self.spec, self._bearer, refused)
        return await self._request(message, headers, exchange)

    async def _request(self, message: dict, headers: dict[str, str], exchange: Exchange) -> jsonrpc.Response:
        method = message["method"]
        try:
            sending = self._send("POST", self._headers(headers), jsonrpc.encode(message))
            async with http_client.Released(await sending, self._lingering) as response:
                await self._check_status(response, method, expect_body=True)
                if method == "initialize":
                    self.session_id = response.headers.get("mcp-session-id") or None
                kind = content_type(response)
                if kind == JSON:
                    return self._own_response(
                        parse(await self._read_body(response, MAX_MESSAGE_BYTES), self.spec.name), exchange
                    )
                if kind != EVENT_STREAM:
                    raise UpstreamError(f"{self.spec.name}: answered {method} with content type {kind or 'none'!r}")
                parser = SseParser(MAX_MESSAGE_BYTES)
                answer = await self._read_events(response, parser, exchange)
            return answer or await self._resume(parser, exchange)
        except NETWORK_ERRORS as exc:
            raise http_client.network_error(self.spec, method, exc) from None

    async def notify(self, message: dict, headers: dict[str, str]) -> None:
        try:
            try:
                await self._post(message, headers)
            except bearer_auth.Refused as refused:
                self._bearer = await bearer_auth.replace(self.spec, self._bearer, refused)
                await self._post(message, headers)
        except NETWORK_ERRORS as exc:
            raise http_client.network_error(self.spec, message["method"], exc) from None

    async def start_listening(self) -> None:
        """Open the legacy GET stream, where a server sends what belongs to no request (list changes, logs).

        Returns once the first attempt is answered, so nothing the server sends after that is lost.
        """
        settled = asyncio.Event()
        self._listener = asyncio.create_task(self._listen(settled))
        # Past the timeout the listener keeps trying on its own.
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self.spec.timeout):
                await settled.wait()

    async def end_session(self) -> None:
        """DELETE the legacy session; a server that does not allow it (405) or is gone is no concern here."""
        if self.session_id is None or self._client is None:
            return
        try:
            async with await self._send("DELETE", self._headers({})):
                pass
        except NETWORK_ERRORS as exc:
            log.info("ending the session failed: %s", http_client.network_error(self.spec, "DELETE", exc).message)
        self.session_id = None

    async def close(self) -> None:
        self.alive = False
        if self._listener is not None:
            self._listener.cancel()
            await asyncio.gather(self._listener, return_exceptions=True)
        await self.end_session()
        for response in list(self._lingering):
            response.close()
        self._lingering.clear()
        if self._client is not None:
            await self._client.close()

    def _headers(self, extra: dict[str, str]) -> dict[str, str]:
        headers = {"Accept": f"{JSON}, {EVENT_STREAM}", "Content-Type": JSON}
        if self.session_id:
            headers["Mcp-Session-Id"] = self.session_id
        if self.legacy_version:
            headers["MCP-Protocol-Version"] = self.legacy_version
        if self._bearer:
            headers["Authorization"] = f"Bearer {self._bearer}"
        headers.update(extra)
        return headers

    async def _send(self, method: str, headers: dict[str, str], body: bytes | None = None) -> aiohttp.ClientResponse:
        """The answer, once its head came; the caller reads its body and releases it (`async with`).

        aiohttp bounds getting a connection and, once the request is sent, each wait for bytes, but not the sending:
        a server that stops taking the body is bounded here, by one timeout for each of the three steps.
        """
        async with asyncio.timeout(3 * self.spec.timeout):
            return await self._client.request(method, self._url, data=body, headers=headers, allow_redirects=False)

    async def _post(self, message: dict, headers: dict[str, str]) -> None:
        """POST what expects no answer: a notification, or our response to a server's request."""
        async with await self._send("POST", self._headers(headers), jsonrpc.encode(message)) as response:
            await self._check_status(response, message.get("method", "a response"), expect_body=False)

    async def _check_status(self, response: aiohttp.ClientResponse, method: str, *, expect_body: bool) -> None:
        status = response.status
        if 200 <= status < 300:
            if expect_body and status in (202, 204):
                raise UpstreamError(f"{self.spec.name}: answered {method} with HTTP {status} and no message")
            return
        if 300 <= status < 400:
            location = response.headers.get("location", "")
            raise UpstreamError(f"{self.spec.name}: {method}: redirected to {location!r}; redirects are not followed")
        bearer_auth.check_refusal(self.spec, status, response.headers, method)
        detail, code = f"HTTP {status}", None
        try:
            error = parse(await self._read_body(response, MAX_ERROR_BODY_BYTES), self.spec.name)
        except UpstreamError:
            error = None  # a plain-text or empty error body says no more than the status does
        if isinstance(error, jsonrpc.Response) and error.error is not None:
            detail, code = f"{detail}: {error.error.message} (JSON-RPC {error.error.code})", error.error.code
        if status == 404 and self.session_id:
            # The server forgot our session: only a new one helps, which the pool opens.
            self.alive = False
            raise UpstreamError(
                f"{self.spec.name}: {method}: the session has expired ({detail})", retryable=True, code=code
            )
        raise UpstreamError(
            f"{self.spec.name}: {method}: {detail}", retryable=status >= 500 or status in (408, 429), code=code
        )

    async def _read_body(self, response: aiohttp.ClientResponse, limit: int) -> bytes:
        chunks, size = [], 0
        async for chunk in response.content.iter_any():
            size += len(chunk)
            if size > limit:
                raise UpstreamError(f"{self.spec.name}: sent a message larger than {limit} bytes")
            chunks.append(chunk)
        return b"".join(chunks)

    def _own_response(self, message: jsonrpc.Message, exchange: Exchange) -> jsonrpc.Response:
        # A null id is how a server answers a request it could not read far enough to learn the id of.
        if isinstance(message, jsonrpc.Response) and message.id in (exchange.request_id, None):
            return message
        raise UpstreamError(f"{self.spec.name}: answered {exchange.method} with something other than its response")

    async def _read_events(
        self, response: aiohttp.ClientResponse, parser: SseParser, exchange: Exchange | None
    ) -> jsonrpc.Response | None:
        """Serve what arrives on a stream until our response does; None when the stream ends first."""
        try:
            async for chunk in response.content.iter_any():
                for event in parser.feed(chunk):
                    # Priming events carry only an id to resume from; other event types are not MCP's.
                    if event.event != "message" or not event.data.strip():
                        continue
                    message = parse(event.data, self.spec.name)
                    if isinstance(message, jsonrpc.Response):
                        if exchange is not None and message.id in (exchange.request_id, None):
                            return message
                        log.warning("%s: ignored a response to no request of ours (id %r)", self.spec.name, message.id)
                        continue
                    if exchange is not None:
                        exchange.touch()
                    with read_clock_stopped(response):
                        reply = await self._serve(message, exchange)
                        if reply is not None:
                            await self._post(reply, {})
        except SseError as exc:
            raise UpstreamError(f"{self.spec.name}: sent a malformed event stream: {exc}") from None
        return None

    async def _resume(self, parser: SseParser, exchange: Exchange) -> jsonrpc.Response:
        """A legacy stream that ended early resumes by GET with Last-Event-ID, after the server's retry delay."""
        attempts = 0
        while self.legacy_version and parser.last_event_id is not None and attempts < MAX_RESUMES:
            attempts += 1
            seen = parser.last_event_id
            await asyncio.sleep(min((parser.retry_ms or 1000) / 1000, self.spec.timeout))
            headers = self._headers({"Accept": EVENT_STREAM, "Last-Event-ID": seen})
            async with await self._send("GET", headers) as response:
                await self._check_status(response, exchange.method, expect_body=True)
                if content_type(response) != EVENT_STREAM:
                    break
                parser = SseParser(MAX_MESSAGE_BYTES, last_event_id=seen)
                answer = await self._read_events(response, parser, exchange)
            if answer is not None:
                return answer
            if parser.last_event_id != seen:
                attempts = 0
        raise UpstreamError(
            f"{self.spec.name}: the stream for {exchange.method} ended before its answer", retryable=True
        )

    async def _listen(self, settled: asyncio.Event) -> None:
        last_event_id, retry_ms, failures = None, None, 0
        while self.alive and failures < MAX_RESUMES:
            headers = self._headers({"Accept": EVENT_STREAM})
            if last_event_id is not None:
                headers["Last-Event-ID"] = last_event_id
            headers.pop("Content-Type")
            parser = SseParser(MAX_MESSAGE_BYTES, last_event_id=last_event_id)
            try:
                async with await self._send("GET", headers) as response:
                    settled.set()
                    if response.status != 200 or content_type(response) != EVENT_STREAM:
                        return  # 405 and the like: this server offers no such stream
                    failures = 0
                    await self._read_events(response, parser, None)
            except aiohttp.SocketTimeoutError:
                pass  # a quiet stream; open it again
            except (*NETWORK_ERRORS, UpstreamError) as exc:
                failures += 1
                log.info("%s: the GET stream failed: %s", self.spec.name, exc)
            settled.set()
            last_event_id, retry_ms = parser.last_event_id, parser.retry_ms or retry_ms
            await asyncio.sleep(min((retry_ms or 1000) / 1000, self.spec.timeout))
