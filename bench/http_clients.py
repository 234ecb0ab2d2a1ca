"""The HTTP clients bench/upstream_client.py compares, each making the same echo tools/call upstream: the console's
own session, and a minimal Streamable HTTP client over httpx, httpcore (anyio or asyncio) and aiohttp."""

import asyncio
import itertools
import os
import sys
from urllib.parse import urlsplit

import aiohttp
import httpcore
import httpx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gateway_overhead import ECHO
from harness import BenchError

from approvals.protocol import jsonrpc
from approvals.upstream import ServerSpec, SessionPool
from approvals.upstream.exchange import parse
from approvals.upstream.http_client import IDLE_CONNECTION_SECONDS
from approvals.upstream.spec import HTTP
from approvals.upstream.sse import SseParser

TIMEOUT_SECONDS = 30
MAX_CONNECTIONS = 100
MAX_MESSAGE_BYTES = 16 * 1024 * 1024


class Minimal:
    """An MCP session over one HTTP library: initialize, then tools/call; `post` is the library's."""

    def __init__(self, url: str, revision: str):
        self.url, self.revision, self.ids = url, revision, itertools.count(1)
        self.headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}

    async def start(self) -> None:
        info = {"name": "upstream-client-bench", "version": "1"}
        params = {"protocolVersion": self.revision, "capabilities": {}, "clientInfo": info}
        answer, headers = await self.exchange(jsonrpc.request(next(self.ids), "initialize", params))
        if answer.error is not None:
            raise BenchError(f"initialize failed: {answer.error.message}")
        if headers.get("mcp-session-id"):
            self.headers["Mcp-Session-Id"] = headers["mcp-session-id"]
        self.headers["MCP-Protocol-Version"] = answer.result["protocolVersion"]
        await self.post(jsonrpc.encode({"jsonrpc": "2.0", "method": "notifications/initialized"}), self.headers)

    async def call(self, text: str) -> str:
        message = jsonrpc.request(next(self.ids), "tools/call", {"name": ECHO, "arguments": {"message": text}})
        answer, _ = await self.exchange(message)
        return answer.result["content"][0]["text"]

    async def exchange(self, message: dict):
        status, headers, chunks = await self.post(jsonrpc.encode(message), self.headers)
        if not 200 <= status < 300:
            raise BenchError(f"{message['method']}: HTTP {status}")
        kind = headers.get("content-type", "").partition(";")[0].strip().lower()
        if kind == "application/json":
            return parse(b"".join(chunks), "bench"), headers
        parser = SseParser(MAX_MESSAGE_BYTES)
        for chunk in chunks:
            for event in parser.feed(chunk):
                if event.event == "message" and event.data.strip():
                    answer = parse(event.data, "bench")
                    if isinstance(answer, jsonrpc.Response):
                        return answer, headers
        raise BenchError(f"{message['method']}: no answer in the stream")

    async def post(self, body: bytes, headers: dict) -> tuple[int, dict, list[bytes]]:
        raise NotImplementedError

    async def aclose(self) -> None:
        pass


class ViaHttpx(Minimal):
    def __init__(self, url, revision):
        super().__init__(url, revision)
        limits = httpx.Limits(
            max_connections=MAX_CONNECTIONS, max_keepalive_connections=20, keepalive_expiry=IDLE_CONNECTION_SECONDS
        )
        self.client = httpx.AsyncClient(timeout=TIMEOUT_SECONDS, follow_redirects=False, limits=limits)
        self.target = httpx.URL(url)

    async def post(self, body, headers):
        async with self.client.stream("POST", self.target, content=body, headers=headers) as response:
            return response.status_code, response.headers, [chunk async for chunk in response.aiter_bytes()]

    async def aclose(self):
        await self.client.aclose()


class ViaHttpcore(Minimal):
    """httpcore's connections, pooled here: the last idle one is taken, and only it is looked at."""

    def __init__(self, url, revision):
        super().__init__(url, revision)
        self.target = httpcore.URL(url)
        self.origin = self.target.origin
        self.host = urlsplit(url).netloc.encode()
        self.idle: list[httpcore.AsyncHTTPConnection] = []
        self.timeouts = {"connect": TIMEOUT_SECONDS, "read": TIMEOUT_SECONDS, "write": TIMEOUT_SECONDS}

    async def connection(self) -> httpcore.AsyncHTTPConnection:
        while self.idle:
            connection = self.idle.pop()
            if connection.is_available() and not connection.has_expired():
                return connection
            await connection.aclose()
        return self.new_connection()

    def new_connection(self) -> httpcore.AsyncHTTPConnection:
        return httpcore.AsyncHTTPConnection(self.origin, keepalive_expiry=IDLE_CONNECTION_SECONDS)

    async def post(self, body, headers):
        connection = await self.connection()
        request = httpcore.Request(
            "POST",
            self.target,
            headers=[
                (b"Host", self.host),
                (b"Content-Length", str(len(body)).encode()),
                *((k.encode(), v.encode()) for k, v in headers.items()),
            ],
            content=body,
            extensions={"timeout": self.timeouts},
        )
        try:
            response = await connection.handle_async_request(request)
            try:
                chunks = [chunk async for chunk in response.stream]
            finally:
                await response.aclose()
        except BaseException:
            await connection.aclose()
            raise
        if connection.is_idle():
            self.idle.append(connection)
        named = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in response.headers}
        return response.status, named, chunks

    async def aclose(self):
        for connection in self.idle:
            await connection.aclose()


class AsyncioStream(httpcore.AsyncNetworkStream):
    """A plain connection on asyncio's streams, its waits bounded by asyncio's own timeouts."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.reader, self.writer = reader, writer

    async def read(self, max_bytes, timeout=None):
        try:
            async with asyncio.timeout(timeout):
                return await self.reader.read(max_bytes)
        except TimeoutError:
            raise httpcore.ReadTimeout() from None
        except OSError as exc:
            raise httpcore.ReadError(exc) from None

    async def write(self, buffer, timeout=None):
        try:
            async with asyncio.timeout(timeout):
                self.writer.write(buffer)
                await self.writer.drain()
        except TimeoutError:
            raise httpcore.WriteTimeout() from None
        except OSError as exc:
            raise httpcore.WriteError(exc) from None

    async def aclose(self):
        self.writer.close()

    def get_extra_info(self, info):
        if info == "is_readable":
            # Data or the end waiting on an idle connection: the server is closing it.
            return self.reader.at_eof() or bool(self.reader._buffer)
        return self.writer.get_extra_info({"socket": "socket", "client_addr": "sockname"}.get(info, info))


class AsyncioBackend(httpcore.AsyncNetworkBackend):
    async def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        try:
            async with asyncio.timeout(timeout):
                return AsyncioStream(*await asyncio.open_connection(host, port))
        except TimeoutError:
            raise httpcore.ConnectTimeout() from None
        except OSError as exc:
            raise httpcore.ConnectError(exc) from None

    async def sleep(self, seconds):
        await asyncio.sleep(seconds)


class ViaHttpcoreAsyncio(ViaHttpcore):
    """The same, on asyncio's streams and timeouts rather than anyio's."""

    def new_connection(self):
        return httpcore.AsyncHTTPConnection(
            self.origin, keepalive_expiry=IDLE_CONNECTION_SECONDS, network_backend=AsyncioBackend()
        )


class ViaAiohttp(Minimal):
    def __init__(self, url, revision):
        super().__init__(url, revision)
        connector = aiohttp.TCPConnector(limit=MAX_CONNECTIONS, keepalive_timeout=IDLE_CONNECTION_SECONDS)
        timeout = aiohttp.ClientTimeout(total=None, connect=TIMEOUT_SECONDS, sock_read=TIMEOUT_SECONDS)
        self.client = aiohttp.ClientSession(connector=connector, timeout=timeout)

    async def post(self, body, headers):
        async with self.client.post(self.url, data=body, headers=headers, allow_redirects=False) as response:
            return response.status, response.headers, [chunk async for chunk in response.content.iter_any()]

    async def aclose(self):
        await self.client.close()


class ViaConsole:
    """The console's own session over its HTTP transport."""

    def __init__(self, url, revision):
        self.pool = SessionPool()
        self.spec = ServerSpec(name="bench", transport=HTTP, url=url, revision=revision, timeout=TIMEOUT_SECONDS)

    async def start(self):
        await self.pool.get(self.spec)

    async def call(self, text: str) -> str:
        session = await self.pool.get(self.spec)
        return (await session.call_tool(ECHO, {"message": text}))["content"][0]["text"]

    async def aclose(self):
        await self.pool.close_all()


MAKERS = {
    "console": ViaConsole,
    "httpx": ViaHttpx,
    "httpcore": ViaHttpcore,
    "httpcore-asyncio": ViaHttpcoreAsyncio,
    "aiohttp": ViaAiohttp,
}
