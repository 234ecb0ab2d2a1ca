"""/mcp as a plain ASGI application: no Django request cycle, middleware, URL resolver or response objects.

The guard (gateway.guard) has checked Host, Origin and size and read the body. What the endpoint's
views need of a request is small (its method, headers, body, peer, and its own URL), so McpRequest
carries only that, and an answer is sent as the gateway built it (gateway.http.Response).

Django's ORM still serves the lookups and writes, in the loop's shared threads or a request's own
thread-sensitive one (sync_to_async), as under Django's handler: each request gets its own
ThreadSensitiveContext, and Django's request_finished is sent in that thread, to close its
connection, only when the request started one. Most requests start none, and cost no signal.
"""

import asyncio
import functools
from http import HTTPStatus

from asgiref.sync import SyncToAsync, ThreadSensitiveContext
from django.core import signals
from django.core.handlers.asgi import get_script_prefix
from django.urls import set_script_prefix
from django.utils.log import log_response

from approvals.gateway import endpoint
from approvals.gateway.origins import request_scheme


class Headers(dict):
    """A request's headers by name in any case, as Django's request.headers reads them: repeated ones joined."""

    def __init__(self, raw: list[tuple[bytes, bytes]]):
        super().__init__()
        for name, value in raw:
            key, text = name.decode("latin-1").lower(), value.decode("latin-1")
            known = dict.get(self, key)
            dict.__setitem__(self, key, text if known is None else f"{known},{text}")

    def __getitem__(self, name: str) -> str:
        return super().__getitem__(name.lower())

    def __contains__(self, name) -> bool:
        return super().__contains__(name.lower())

    def get(self, name: str, default=None):
        return super().get(name.lower(), default)


class McpRequest:
    """What the endpoint reads of a request, named as on Django's request, so the gateway reads either."""

    def __init__(self, scope, body: bytes):
        self.scope, self.body = scope, body
        self.method = scope["method"]
        self.headers = Headers(scope["headers"])
        self.content_type = self.headers.get("Content-Type", "").split(";")[0].strip().lower()

    @functools.cached_property
    def META(self) -> dict:
        """The names Django's request.META gives the peer and the headers (HTTP_X_FORWARDED_FOR, …), made only for a
        request that reads them: an anonymous client's, one admitted in a thread, a refused one's."""
        meta = {f"HTTP_{name.upper().replace('-', '_')}": value for name, value in self.headers.items()}
        client = self.scope.get("client")
        meta["REMOTE_ADDR"] = client[0] if client else ""
        return meta

    def build_absolute_uri(self, location: str) -> str:
        """`location` (a path, as reverse() gives it) on the scheme and Host this request came by."""
        return f"{request_scheme(self.scope)}://{self.headers.get('Host', '')}{location}"


def thread_of_this_request_started() -> bool:
    """Whether this request ran synchronous work in a thread of its own (sync_to_async's thread-sensitive mode)."""
    context = SyncToAsync.thread_sensitive_context.get(None)
    return context is not None and context in SyncToAsync.context_to_thread_executor


async def disconnected(receive):
    """Returns once the client has gone: the body was read whole before, so nothing else arrives."""
    while (await receive())["type"] != "http.disconnect":
        pass


async def answer(request: McpRequest, send):
    response = await endpoint.mcp_endpoint(request)
    if response.status_code >= 400:
        # As Django's handler logs a refused request, so that logs and alerts read the same.
        reason = HTTPStatus(response.status_code).phrase
        log_response("%s: %s", reason, request.scope["path"], response=response, request=request)
    try:
        await response.send_to(send)
    finally:
        response.close()


async def serve_mcp(scope, body: bytes, receive, send):
    """The guard's endpoint: answer one /mcp request whose body has been read."""
    async with ThreadSensitiveContext():
        set_script_prefix(get_script_prefix(scope))
        # A client that disconnects cancels the answer, as under Django's handler: a call it brought is cancelled.
        listening = asyncio.create_task(disconnected(receive))
        ending = False

        async def sent(message):
            nonlocal ending
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                # The answer's last message: a client leaving now cancels nothing. Stopped listening first, the
                # server's end of the response does not wake the loop from another thread to say so.
                ending = True
                listening.cancel()
            await send(message)

        answering = asyncio.create_task(answer(McpRequest(scope, body), sent))
        try:
            await asyncio.wait([listening, answering], return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not answering.done() and not ending:
                answering.cancel()
            if not listening.done():
                listening.cancel()
            # The answer's own cancellation handling runs to its end before the request's thread is let go of.
            await asyncio.gather(listening, answering, return_exceptions=True)
            if thread_of_this_request_started():
                await signals.request_finished.asend(sender=McpRequest)
        if not answering.cancelled() and answering.exception() is not None:
            # Sending broke, or something below the endpoint's own catch-all: the server logs it.
            raise answering.exception()
