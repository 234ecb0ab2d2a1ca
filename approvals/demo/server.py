"""The demo server over stdio: newline-delimited JSON-RPC on stdin and stdout, logs on stderr.

Only `tools/call` can take time, so it alone runs as a task; everything else is
answered in arrival order, and stdin is read all the while, so a slow tool never
holds up a cancellation or the client's answer to a form the tool is waiting on.
"""

import asyncio
import inspect
import itertools
import logging
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import contextmanager, suppress
from functools import partial

from approvals.demo import tools
from approvals.demo.data import Store, seeded_store
from approvals.demo.eras import CACHE_HINTS, Connection, Exchange
from approvals.demo.state import StateError, StateSigner, call_digest
from approvals.demo.stdio import MAX_MESSAGE_BYTES, stdin_lines, write_stdout
from approvals.demo.toolkit import CallContext, InputRequired, InputUnavailable
from approvals.protocol import jsonrpc
from approvals.protocol.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    JsonRpcError,
)
from approvals.protocol.revisions import LEGACY, LOG_LEVELS, MODERN, REVISIONS

logger = logging.getLogger("approvals.demo")

# A person answers the form, possibly after an approval queue; past this the call gives up.
ELICITATION_TIMEOUT = 900.0


def _decode(line: bytes) -> object:
    if len(line) > MAX_MESSAGE_BYTES:
        raise JsonRpcError(PARSE_ERROR, f"Parse error: a message may not exceed {MAX_MESSAGE_BYTES} bytes")
    try:
        return jsonrpc.decode(line)
    except RecursionError:
        # jsonrpc.decode lets this through, and one deeply nested line must not end the server.
        raise JsonRpcError(PARSE_ERROR, "Parse error: the message is nested too deeply") from None


def _recoverable_id(raw: object) -> str | int | None:
    """The id to answer an invalid message with, when one can be read from it at all."""
    msg_id = raw.get("id") if isinstance(raw, dict) else None
    return msg_id if isinstance(msg_id, (str, int)) and not isinstance(msg_id, bool) else None


class Server:
    def __init__(self, store: Store, write: Callable[[bytes], None], signer: StateSigner | None = None):
        self.store = store
        self._write = write
        self.signer = signer or StateSigner()
        self.connection = Connection()
        self.log_level: str | None = None
        self.running: dict[str | int, asyncio.Task] = {}
        self.waiting: dict[str, asyncio.Future] = {}
        self._ids = itertools.count(1)
        shared = {"tools/list": self.list_tools, "tools/call": self.call_tool}
        self.handlers = {
            LEGACY: {
                "initialize": self.connection.initialize,
                "ping": lambda *_: {},
                "logging/setLevel": self.set_level,
                **shared,
            },
            MODERN: {"server/discover": self.connection.discover, **shared},
        }

    def send(self, message: dict) -> None:
        self._write(jsonrpc.encode(message) + b"\n")

    async def serve(self, lines: AsyncIterator[bytes]) -> None:
        try:
            async for line in lines:
                self.receive(line)
        finally:
            calls = list(self.running.values())
            for task in calls:
                task.cancel()
            await asyncio.gather(*calls, return_exceptions=True)

    def receive(self, line: bytes) -> None:
        if not line.strip():
            return
        raw = None
        try:
            raw = _decode(line)
            message = jsonrpc.parse_message(raw)
        except JsonRpcError as exc:
            self.send(jsonrpc.error(_recoverable_id(raw), exc))
            return
        if isinstance(message, jsonrpc.Request):
            self.on_request(message)
        elif isinstance(message, jsonrpc.Notification):
            self.on_notification(message)
        else:
            self.on_response(message)

    def on_request(self, request: jsonrpc.Request) -> None:
        if request.id in self.running:
            error = JsonRpcError(INVALID_REQUEST, f"Invalid request: id {request.id!r} belongs to a running request")
            self.send(jsonrpc.error(request.id, error))
            return
        with self.answering(request.id):
            exchange = self.connection.route(request)
            handler = self.handlers[exchange.era].get(request.method)
            if handler is None:
                raise JsonRpcError(METHOD_NOT_FOUND, f"Method not found: {request.method}")
            if inspect.iscoroutinefunction(handler):
                self.running[request.id] = asyncio.create_task(self.run(request, handler, exchange))
                return
            self.send(jsonrpc.result(request.id, self.connection.finish(handler(request.params, exchange), exchange)))

    async def run(self, request: jsonrpc.Request, handler, exchange: Exchange) -> None:
        try:
            with self.answering(request.id):
                value = await handler(request.params, exchange)
                self.send(jsonrpc.result(request.id, self.connection.finish(value, exchange)))
        except asyncio.CancelledError:
            # A cancelled request gets no answer at all (the spec's rule for notifications/cancelled).
            logger.info("request %r cancelled", request.id)
            raise
        finally:
            self.running.pop(request.id, None)

    @contextmanager
    def answering(self, request_id: str | int):
        """Answer whatever the handling of a request raises with its JSON-RPC error; a bug must not end the server."""
        try:
            yield
        except JsonRpcError as exc:
            self.send(jsonrpc.error(request_id, exc))
        except Exception:
            logger.exception("request %r failed", request_id)
            self.send(jsonrpc.error(request_id, JsonRpcError(INTERNAL_ERROR, "Internal error")))

    def on_notification(self, note: jsonrpc.Notification) -> None:
        if note.method == "notifications/cancelled":
            request_id = note.params.get("requestId")
            task = self.running.get(request_id) if isinstance(request_id, (str, int)) else None
            if task is not None:
                logger.info("client cancelled request %r: %s", request_id, note.params.get("reason", "no reason given"))
                task.cancel()
        elif note.method == "notifications/initialized":
            logger.info("client confirmed initialization")

    def on_response(self, response: jsonrpc.Response) -> None:
        future = self.waiting.get(response.id) if isinstance(response.id, str) else None
        if future is None or future.done():
            logger.warning("ignoring a response to no pending request: %r", response.id)
            return
        future.set_result(response)

    def set_level(self, params: dict, _: Exchange) -> dict:
        if params.get("level") not in LOG_LEVELS:
            raise JsonRpcError(INVALID_PARAMS, f"Invalid params: level must be one of {', '.join(LOG_LEVELS)}")
        self.log_level = params["level"]
        return {}

    def list_tools(self, params: dict, exchange: Exchange) -> dict:
        cursor = params.get("cursor")
        if cursor is not None and not isinstance(cursor, str):
            raise JsonRpcError(INVALID_PARAMS, "Invalid params: cursor must be a string")
        shown, next_cursor = tools.page(cursor, REVISIONS[exchange.version])
        value = {"tools": shown, **({"nextCursor": next_cursor} if next_cursor else {})}
        return {**value, **CACHE_HINTS} if exchange.era == MODERN else value

    async def call_tool(self, params: dict, exchange: Exchange) -> dict:
        name = params.get("name")
        arguments = {} if params.get("arguments") is None else params["arguments"]
        if not isinstance(name, str) or not isinstance(arguments, dict):
            raise JsonRpcError(
                INVALID_PARAMS, "Invalid params: tools/call needs a tool name (a string) and arguments (an object)"
            )
        tool = tools.BY_NAME.get(name)
        if tool is None:
            raise JsonRpcError(INVALID_PARAMS, f"Unknown tool: {name}")
        digest = call_digest(name, arguments)
        if exchange.era == MODERN:
            ask = partial(self.answer_from_retry, self.input_responses(params, digest))
        else:
            ask = self.ask_client
        ctx = CallContext(
            self.store,
            exchange.version,
            exchange.can_elicit,
            ask,
            progress=partial(self.progress, exchange.progress_token),
            log=self.log,
        )
        try:
            return await tools.call(tool, ctx, arguments)
        except InputRequired as pending:
            return {
                "resultType": "input_required",
                "inputRequests": pending.requests,
                "requestState": self.signer.seal(digest, list(pending.requests)),
            }

    def input_responses(self, params: dict, digest: str) -> dict:
        """The answers a modern retry brings, once its requestState proves it continues this very call."""
        state, responses = params.get("requestState"), params.get("inputResponses")
        if state is None and responses is None:
            return {}
        responses = {} if responses is None else responses
        if not isinstance(responses, dict) or not all(isinstance(answer, dict) for answer in responses.values()):
            raise JsonRpcError(INVALID_PARAMS, "Invalid params: inputResponses must map each key to a result object")
        if not isinstance(state, str):
            raise JsonRpcError(INVALID_PARAMS, "Invalid params: a retry must echo the requestState it was given")
        try:
            self.signer.open(state, digest)
        except StateError as exc:
            raise JsonRpcError(INVALID_PARAMS, f"Invalid params: the requestState cannot be used: {exc}") from None
        return responses

    @staticmethod
    async def answer_from_retry(responses: dict, key: str, request: dict) -> dict:
        if key in responses:
            return responses[key]
        raise InputRequired({key: request})

    async def ask_client(self, _key: str, request: dict) -> dict:
        request_id = f"demo-{next(self._ids)}"
        future = asyncio.get_running_loop().create_future()
        self.waiting[request_id] = future
        self.send(jsonrpc.request(request_id, request["method"], request["params"]))
        try:
            async with asyncio.timeout(ELICITATION_TIMEOUT):
                response = await future
        except asyncio.CancelledError:
            self.withdraw(request_id, "the tool call was cancelled")
            raise
        except TimeoutError:
            self.withdraw(request_id, "nobody answered in time")
            raise InputUnavailable(f"nobody answered within {ELICITATION_TIMEOUT / 60:g} minutes") from None
        finally:
            del self.waiting[request_id]
        if response.error is not None:
            raise InputUnavailable(f"the client could not ask ({response.error.code}: {response.error.message})")
        return response.result

    def withdraw(self, request_id: str, reason: str) -> None:
        self.send(jsonrpc.notification("notifications/cancelled", {"requestId": request_id, "reason": reason}))

    def progress(self, token: str | int | None, progress: float, total: float | None, message: str | None) -> None:
        if token is None:
            return
        params = {"progressToken": token, "progress": progress, "total": total, "message": message}
        self.send(jsonrpc.notification("notifications/progress", {k: v for k, v in params.items() if v is not None}))

    def log(self, level: str, message: str) -> None:
        logger.info("%s: %s", level, message)
        # Only handshake-era clients get log messages: they opt in once with logging/setLevel, whereas
        # 2026 opts in per request, a deprecated feature the demo does not offer.
        if self.connection.era != LEGACY or self.log_level is None:
            return
        if LOG_LEVELS.index(level) >= LOG_LEVELS.index(self.log_level):
            params = {"level": level, "logger": "customer-records", "data": message}
            self.send(jsonrpc.notification("notifications/message", params))


def main() -> None:
    logging.basicConfig(
        stream=sys.stderr, level=logging.INFO, format="%(asctime)s demo-server %(levelname)s %(message)s"
    )
    with suppress(KeyboardInterrupt):
        asyncio.run(Server(seeded_store(), write_stdout).serve(stdin_lines()))


if __name__ == "__main__":
    main()
