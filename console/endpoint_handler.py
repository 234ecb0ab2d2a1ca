"""Django for the MCP endpoint: the view, without the pages' middleware or a thread per request for Django's signals."""

import asyncio
import contextlib

from asgiref.sync import SyncToAsync, sync_to_async
from django.core import signals
from django.core.exceptions import RequestAborted
from django.core.handlers.asgi import ASGIHandler, get_script_prefix
from django.core.handlers.exception import convert_exception_to_response
from django.urls import set_script_prefix


def thread_of_this_request_started() -> bool:
    """Whether this request ran synchronous work in a thread of its own (sync_to_async's thread-sensitive mode)."""
    context = SyncToAsync.thread_sensitive_context.get(None)
    return context is not None and context in SyncToAsync.context_to_thread_executor


class EndpointHandler(ASGIHandler):
    """Django for the MCP endpoint, without the pages' middleware.

    Its clients have no session, cookie or CSRF token, its answers are JSON or
    event streams that no page frames, and McpEndpointGuard has checked Host,
    Origin and size before Django sees the request.

    Django sends request_started and request_finished from a thread it starts for
    each request, two trips there and back for receivers (close_old_connections,
    reset_queries, close_caches, reset_urlconf) that act on that thread's connections
    alone. Most of the endpoint's requests run no synchronous work in that thread
    (the gateway's lookups and writes run in the loop's shared threads, which give
    their connections back themselves: db.shared_threads.connection_given_back): a thread
    started afresh has nothing for request_started to reset, and one never started
    has nothing for request_finished to close. So request_finished is sent, in that
    thread, only when the request started it.
    """

    def load_middleware(self, is_async=False):
        self._view_middleware, self._template_response_middleware, self._exception_middleware = [], [], []
        self._middleware_chain = convert_exception_to_response(self._get_response_async)

    async def handle(self, scope, receive, send):
        try:
            body_file = await self.read_body(receive)
        except RequestAborted:
            return
        set_script_prefix(get_script_prefix(scope))
        request, error_response = self.create_request(scope, body_file)
        if request is None:
            body_file.close()
            await self.send_response(error_response, send)
            await self.finish(error_response)
            return
        # A client that disconnects cancels the view, as under Django's own handler: a call it brought is cancelled.
        listening = asyncio.create_task(self.listen_for_disconnect(receive))
        answering = asyncio.create_task(self.answer(request, send))
        try:
            await asyncio.wait([listening, answering], return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (listening, answering):
                if not task.done():
                    task.cancel()
            # The view's own cancellation handling runs to its end before the request's thread is let go of.
            await asyncio.gather(listening, answering, return_exceptions=True)
            body_file.close()
        for task in (listening, answering):
            if not task.cancelled() and not isinstance(task.exception(), RequestAborted | None):
                raise task.exception()
        if not answering.cancelled():
            await self.finish(answering.result())
        elif thread_of_this_request_started():
            await signals.request_finished.asend(sender=self.__class__)

    async def answer(self, request, send):
        response = await self.run_get_response(request)
        # The client may disconnect while the answer is sent.
        with contextlib.suppress(asyncio.CancelledError):
            await self.send_response(response, send)
        return response

    async def finish(self, response):
        """Close the response, with request_finished in the request's thread if it started one."""
        if thread_of_this_request_started():
            await sync_to_async(response.close)()
            return
        # No thread, no connection of this request's to close: the response's resources only (an HttpResponse's
        # close() is these closers, then request_finished).
        for closer in response._resource_closers:
            # As HttpResponse.close does: one closer failing stops no other.
            with contextlib.suppress(Exception):
                closer()
        response.closed = True
