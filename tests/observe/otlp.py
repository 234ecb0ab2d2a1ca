"""An OTLP/HTTP trace receiver on loopback, as an OpenTelemetry Collector takes a console's spans."""

import threading
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from tests.fixtures.http_answers import send


class Collector(BaseHTTPRequestHandler):
    """Keeps every span it is sent, as protobuf messages."""

    spans: list

    def log_message(self, *args):
        pass

    def do_POST(self):
        request = ExportTraceServiceRequest()
        request.ParseFromString(self.rfile.read(int(self.headers["Content-Length"])))
        for resource in request.resource_spans:
            for scope in resource.scope_spans:
                self.spans.extend(scope.spans)
        send(self, 200, ExportTraceServiceResponse().SerializeToString(), {"Content-Type": "application/x-protobuf"})


@contextmanager
def serving(handler, **state):
    """The port of a threaded server of `handler`, whose class attributes are `state`, until the block ends."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), type("Handler", (handler,), state))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
