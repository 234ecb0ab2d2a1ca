"""The HTTP client under one upstream session's Streamable HTTP transport (transport_http), over aiohttp.

aiohttp rather than httpx, which the rest of the console's outbound HTTP uses: every forwarded call crosses it, and
aiohttp parses HTTP in C with no anyio layer beneath (bench/upstream_client.py compares the two). One client per
session, and so per server, identity and event loop (an aiohttp client belongs to the loop it was made on), closed
with the session.
"""

import asyncio
import contextlib
import urllib.request

import aiohttp
from yarl import URL

from .errors import UpstreamError
from .outbound import tls_context
from .spec import ServerSpec

MAX_CONNECTIONS = 100
# How long an idle connection is kept for the next request: well under the keep-alive after which servers close
# theirs (gunicorn's 2 seconds; uvicorn's, Node's and Apache's 5). A request sent as the server closes the
# connection is lost unanswered, which cannot be told from a server failing in the middle of it; the console sends
# no request twice, so a tools/call would fail.
IDLE_CONNECTION_SECONDS = 1.0
# The longest line of an answer's head taken: httpcore's bound on the whole head (under httpx), so that no header an
# upstream could send the console before is refused now (aiohttp's own bound is 8 KiB).
MAX_HEAD_LINE_BYTES = 100 * 1024
# How long a stream that brought its answer may take to end (a server ends it right after the answer): ended, its
# connection serves the next request; still open then, it is closed.
STREAM_END_SECONDS = 0.1
# What aiohttp raises for a connection that fails and for a wait that times out; outside, both are UpstreamError.
NETWORK_ERRORS = (aiohttp.ClientError, TimeoutError)


def client(spec: ServerSpec, url: URL) -> aiohttp.ClientSession:
    """A pool of connections to the server at `url`, with its configured headers; made on the event loop that will
    use it."""
    connector = aiohttp.TCPConnector(
        limit=MAX_CONNECTIONS, keepalive_timeout=IDLE_CONNECTION_SECONDS, ssl=tls_context()
    )
    # sock_read bounds each wait for bytes, from the request's end: a stream may take longer in all, if not silent.
    timeout = aiohttp.ClientTimeout(total=None, connect=spec.timeout, sock_connect=spec.timeout, sock_read=spec.timeout)
    return aiohttp.ClientSession(
        connector=connector,
        timeout=timeout,
        headers=spec.headers,
        proxy=environment_proxy(url),
        max_line_size=MAX_HEAD_LINE_BYTES,
        max_field_size=MAX_HEAD_LINE_BYTES,
        # A load balancer's sticky-session cookie is kept for this session alone, from an upstream on an IP address
        # too (which aiohttp's jar refuses unless unsafe), and sent back as it came.
        cookie_jar=aiohttp.CookieJar(unsafe=True, quote_cookie=False),
    )


def environment_proxy(url: URL) -> str | None:
    """The proxy the environment names for `url` (HTTP_PROXY, HTTPS_PROXY, NO_PROXY), as httpx would take it; read
    once per client, where aiohttp's trust_env would read it on every request, and .netrc's credentials too."""
    proxies = urllib.request.getproxies_environment()
    if not proxies or urllib.request.proxy_bypass_environment(url.host, proxies):
        return None
    return proxies.get(url.scheme) or proxies.get("all")


def network_error(spec: ServerSpec, method: str, exc: BaseException) -> UpstreamError:
    if isinstance(exc, TimeoutError):
        return UpstreamError(f"{spec.name}: no answer to {method} within {spec.timeout:g}s", retryable=True)
    return UpstreamError(
        f"{spec.name}: {method}: cannot talk to {spec.url}: {type(exc).__name__}: {exc}", retryable=True
    )


@contextlib.contextmanager
def read_clock_stopped(response: aiohttp.ClientResponse):
    """aiohttp's sock_read runs whether or not anyone reads. While the console answers what the server asked on a
    stream (an operator may take minutes), the server's silence is the console's doing: the clock stops, and starts
    afresh once the console reads again, as the wait of a read does."""
    protocol = response.connection.protocol if response.connection is not None else None
    if protocol is None:
        yield
        return
    limit, protocol.read_timeout = protocol.read_timeout, None
    protocol.start_timeout()  # with no limit, this stops the clock running
    try:
        yield
    finally:
        # A stream that ended meanwhile gave its connection back to the pool, for another request to time.
        if response.connection is not None:
            protocol.read_timeout = limit
            protocol.start_timeout()


class Released:
    """`async with` a response, as aiohttp's own, but for a stream left before its end, its answer read.

    aiohttp pools a connection only once its response was read to the end, and closes one released before: every
    answer on an event stream would cost a connection. Left alone meanwhile (in `lingering`, which the transport
    closes with itself), the response gives its connection back to the pool as the end comes (aiohttp's own doing),
    or is closed if the end is not there in STREAM_END_SECONDS. Whatever else ends the `async with`, an error or a
    cancellation, releases it at once, as aiohttp would.
    """

    __slots__ = ("response", "lingering")

    def __init__(self, response: aiohttp.ClientResponse, lingering: set[aiohttp.ClientResponse]):
        self.response, self.lingering = response, lingering

    async def __aenter__(self) -> aiohttp.ClientResponse:
        return self.response

    async def __aexit__(self, kind, error, traceback) -> None:
        response = self.response
        if kind is None and not response.content.is_eof():
            self.lingering.add(response)
            closing = asyncio.get_running_loop().call_later(STREAM_END_SECONDS, self.close)
            response.content.on_eof(closing.cancel)
            response.content.on_eof(self.ended)
            return
        await response.__aexit__(kind, error, traceback)

    def ended(self) -> None:
        self.lingering.discard(self.response)

    def close(self) -> None:
        self.lingering.discard(self.response)
        self.response.close()


def content_type(response: aiohttp.ClientResponse) -> str:
    return response.headers.get("content-type", "").partition(";")[0].strip().lower()
