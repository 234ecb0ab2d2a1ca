"""OpenTelemetry traces, sent over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT names a collector.

Without that variable nothing of OpenTelemetry is imported: span() is a null context and
carried() hands back what it is given, so an untraced console pays for neither. With it, a
request's server span continues the client's W3C traceparent, Django, aiohttp, httpx and
psycopg add theirs, aiohttp passes the trace on to upstream servers in its own traceparent, and the
console adds its steps of a call: receive, policy, hold, forward and record. A request's URL
is kept with its credentials redacted (observe/redaction).
"""

import contextlib
import functools
import os

from approvals.observe import redaction

SERVICE = "mcp-approval-console"
_tracer = None


def enabled() -> bool:
    return bool(os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"))


def start():
    """Once per process, before Django loads its middleware: the exporter, and the libraries' instrumentation."""
    global _tracer
    if _tracer is not None or not enabled():
        return
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.instrumentation.aiohttp_client import AioHttpClientInstrumentor
    from opentelemetry.instrumentation.django import DjangoInstrumentor
    from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor
    from opentelemetry.instrumentation.psycopg import PsycopgInstrumentor
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    name = os.environ.get("OTEL_SERVICE_NAME") or SERVICE
    provider = TracerProvider(resource=Resource.create({"service.name": name}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    DjangoInstrumentor().instrument(request_hook=redaction.redact_span)
    AioHttpClientInstrumentor().instrument()  # the upstream client's Streamable HTTP
    HTTPXClientInstrumentor().instrument()  # the rest of the outbound HTTP
    PsycopgInstrumentor().instrument()
    _tracer = trace.get_tracer("approvals")


def served(application):
    """The ASGI application with a server span per request: /mcp runs without Django's middleware, and so
    without the span Django's instrumentation would start."""
    if _tracer is None:
        return application
    from opentelemetry.instrumentation.asgi import OpenTelemetryMiddleware

    return OpenTelemetryMiddleware(application, server_request_hook=redaction.redact_span)


def span(name: str, **attributes):
    """A span of the console's own, as a context manager, under whatever span is current."""
    if _tracer is None:
        return contextlib.nullcontext()
    return _tracer.start_as_current_span(f"console.{name}", attributes=attributes)


def traced(name: str):
    """An async function run in span `name`; the function itself when the process is untraced."""

    def decorate(func):
        if not enabled():
            return func

        @functools.wraps(func)
        async def run(*args, **kwargs):
            with span(name):
                return await func(*args, **kwargs)

        return run

    return decorate


def carried(func):
    """`func`, run under the trace current now wherever it runs later (another task's batch, another thread)."""
    if _tracer is None:
        return func
    from opentelemetry import context

    captured = context.get_current()

    @functools.wraps(func)
    def within(*args, **kwargs):
        token = context.attach(captured)
        try:
            return func(*args, **kwargs)
        finally:
            context.detach(token)

    return within


def current_trace_id() -> str | None:
    """The trace the current span belongs to, as 32 hex digits; None when untraced."""
    if _tracer is None:
        return None
    from opentelemetry import trace

    found = trace.get_current_span().get_span_context()
    return format(found.trace_id, "032x") if found.is_valid else None
