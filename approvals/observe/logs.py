"""Logs as one JSON object a line (LOG_FORMAT=json), carrying what is known of the call being served.

The console, Django, the web server and celery all log through the standard library; structlog's
ProcessorFormatter renders each record as JSON, so no call site changes, and adds the
context bound here: the call's id, its token's name, its server and tool, and its trace id.
Context lives in contextvars, which follow a request from the event loop into the threads
that run its synchronous work, and end with it.
"""

import contextvars
import functools
import logging
import os
import re

import structlog

from approvals.observe import redaction

TRACEPARENT = re.compile(r"^[0-9a-f]{2}-(?P<trace_id>[0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}")


# What bind() bound in this context, beside structlog's own variables: carried() reads it at once, where
# structlog.contextvars.get_contextvars() walks every variable of the context, at each of a call's writes.
_bound: contextvars.ContextVar[dict | None] = contextvars.ContextVar("logs_bound", default=None)


def bind(**fields):
    """Add `fields` to the context of every line logged from here on in this request or task (None: not known)."""
    known = {name: value for name, value in fields.items() if value is not None and value != ""}
    if known:
        structlog.contextvars.bind_contextvars(**known)
        _bound.set({**(_bound.get() or {}), **known})


def carried(func):
    """`func`, run with the context bound now, wherever it runs later (another task's batch of writes, its thread)."""
    bound = _bound.get()
    if not bound:
        return func

    @functools.wraps(func)
    def within(*args, **kwargs):
        with structlog.contextvars.bound_contextvars(**bound):
            restored = _bound.set({**(_bound.get() or {}), **bound})
            try:
                return func(*args, **kwargs)
            finally:
                _bound.reset(restored)

    return within


def trace_id_of(traceparent: str) -> str | None:
    """The trace id a W3C traceparent header names, if it is well formed and not all zeros."""
    found = TRACEPARENT.match(traceparent.strip().lower())
    return found["trace_id"] if found and found["trace_id"] != "0" * 32 else None


def message_and_origin(logger, method_name, event_dict):
    record = event_dict.get("_record")
    if record is not None:
        event_dict["logger"] = record.name
        event_dict["level"] = record.levelname.lower()
    return event_dict


# What a line may name besides the bound context, passed as logging's `extra`: an access line, and a call's end.
EXTRA_FIELDS = ("client", "request_line", "status", "status_code", "size", "call_id", "server", "tool", "outcome")

access = logging.getLogger("console.access")


def access_logged(application):
    """ASGI middleware: a line for each request once it is answered, or each websocket once it ends, with the
    credentials a URL may carry redacted (observe/redaction), whichever server runs the console; the servers'
    own access logs, which would write them, are off."""

    async def serve(scope, receive, send):
        if scope["type"] not in ("http", "websocket") or not access.isEnabledFor(logging.INFO):
            # Nothing would be written: the answer goes out as the application sends it, its status and size uncounted.
            return await application(scope, receive, send)
        answer = {"status": None, "size": 0}

        async def noted(message):
            kind = message["type"]
            if kind == "http.response.start":
                answer["status"] = message["status"]
            elif kind == "http.response.body":
                answer["size"] += len(message.get("body", b""))
            elif kind == "websocket.accept":
                answer["status"] = 101
            elif kind == "websocket.close" and answer["status"] is None:
                answer["status"] = 403
            await send(message)

        try:
            return await application(scope, receive, noted)
        finally:
            write_access_line(scope, answer["status"], answer["size"])

    return serve


def write_access_line(scope, status: int | None, size: int):
    client = scope.get("client")
    method = scope.get("method", "WEBSOCKET")
    query = scope.get("query_string", b"").decode("latin-1")
    request = redaction.redacted(f"{method} {scope.get('path', '')}{'?' + query if query else ''}")
    fields = {"client": f"{client[0]}:{client[1]}" if client else "-", "request_line": request}
    fields.update(status=status, size=size)
    access.info('%s "%s" %s %s', fields["client"], request, "-" if status is None else status, size, extra=fields)


class JsonFormatter(structlog.stdlib.ProcessorFormatter):
    """A record as one JSON line: time, level, logger, message, the bound context, and any traceback as text."""

    def __init__(self, *args, **kwargs):
        super().__init__(
            foreign_pre_chain=[
                structlog.contextvars.merge_contextvars,
                structlog.stdlib.ExtraAdder(allow=EXTRA_FIELDS),
                message_and_origin,
                structlog.processors.TimeStamper(fmt="iso", utc=True, key="time"),
            ],
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.processors.format_exc_info,
                structlog.processors.StackInfoRenderer(),
                structlog.processors.EventRenamer("message"),
                structlog.processors.JSONRenderer(sort_keys=False),
            ],
        )
        # Python's warnings print to stderr on their own: routed through logging, they are JSON lines too.
        logging.captureWarnings(True)


def web_server_formatter() -> logging.Formatter:
    """The form of granian's own lines, its main process's included (a worker that would not stop, say), which
    console/granian_logging.json names: JSON under LOG_FORMAT=json, granian's own plain form otherwise. The main
    process loads no Django settings, so it reads the variable itself."""
    if os.environ.get("LOG_FORMAT", "text").strip().lower() == "json":
        return JsonFormatter()
    return logging.Formatter("[%(levelname)s] %(message)s")
