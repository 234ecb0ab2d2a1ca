"""HTTP plumbing of the MCP endpoint: its answers, media types, the body's one message, and JSON-RPC error responses."""

from approvals.protocol import jsonrpc
from approvals.protocol.jsonrpc import INVALID_REQUEST, JsonRpcError, Message, Notification, Request
from approvals.protocol.revisions import LEGACY, LEGACY_VERSIONS, META_PROTOCOL_VERSION, MODERN, MODERN_VERSIONS

SESSION_HEADER = "Mcp-Session-Id"
VERSION_HEADER = "MCP-Protocol-Version"


class Response:
    """A whole answer, sent as ASGI messages (gateway.application): its status, headers and body."""

    def __init__(self, body: bytes = b"", status: int = 200, headers: dict | None = None):
        self.status_code, self.content, self.headers = status, body, headers or {}

    def start(self, extra: list[tuple[bytes, bytes]]) -> dict:
        own = self.headers.items()
        headers = [(name.lower().encode("latin-1"), str(value).encode("latin-1")) for name, value in own]
        return {"type": "http.response.start", "status": self.status_code, "headers": headers + extra}

    async def send_to(self, send):
        # A 204 carries no Content-Length (RFC 9110, 8.6).
        length = [] if self.status_code == 204 else [(b"content-length", str(len(self.content)).encode())]
        await send(self.start(length))
        await send({"type": "http.response.body", "body": self.content})

    def close(self):
        """Let go of what the answer holds; a whole body holds nothing."""


class Refused(Exception):
    """Ends a request early with a finished response (an error the client must see as it is)."""

    def __init__(self, response: Response):
        super().__init__(response.status_code)
        self.response = response


def jsonrpc_response(message: dict, status: int = 200, headers: dict | None = None) -> Response:
    return Response(jsonrpc.encode(message), status, {"Content-Type": "application/json", **(headers or {})})


def error_response(exc: JsonRpcError, status: int, msg_id=None, headers: dict | None = None) -> Response:
    return jsonrpc_response(jsonrpc.error(msg_id, exc), status, headers)


def rejection(status: int, message: str, code: int = INVALID_REQUEST, headers: dict | None = None) -> Response:
    """An HTTP-level refusal; its JSON-RPC error has no id, as the transport spec allows."""
    return error_response(JsonRpcError(code, message), status, None, headers)


def accepted(headers: dict | None = None) -> Response:
    return Response(status=202, headers=headers)


def no_content() -> Response:
    return Response(status=204)


def accepts(request) -> tuple[bool, bool]:
    """Whether the client takes JSON, and whether it takes an SSE stream; no Accept header takes anything."""
    header = request.headers.get("Accept") or "*/*"
    types = {part.split(";")[0].strip().lower() for part in header.split(",")}
    return bool(types & {"application/json", "application/*", "*/*"}), bool(
        types & {"text/event-stream", "text/*", "*/*"}
    )


def check_post_media_types(request):
    # Clients in the wild send Accept: application/json alone; they get JSON answers rather than a 406.
    if not accepts(request)[0]:
        raise Refused(rejection(406, "Not Acceptable: the client must accept application/json"))
    if request.content_type != "application/json":
        raise Refused(rejection(415, "Unsupported Media Type: Content-Type must be application/json"))


def require_event_stream(request):
    if not accepts(request)[1]:
        raise Refused(
            rejection(406, "Not Acceptable: this answer is a stream; the client must accept text/event-stream")
        )


def read_message(request) -> Message:
    """The body's single JSON-RPC message; a parse error or anything but one message refuses with 400."""
    body = request.body
    try:
        value = jsonrpc.decode(body)
        if b"u0000" in body and jsonrpc.has_nul(value):
            # Refused, not altered: the arguments would reach the upstream server changed.
            raise JsonRpcError(jsonrpc.INVALID_PARAMS, "Invalid params: strings may not contain U+0000 (NUL)")
        return jsonrpc.parse_message(value)
    except JsonRpcError as exc:
        raise Refused(error_response(exc, 400)) from None


def era_of(request, message: Message | None) -> str:
    """Which era serves this request, from the version it names in its header or, failing that, in its _meta."""
    method = message.method if isinstance(message, (Request, Notification)) else None
    if method == "server/discover":
        return MODERN
    header = request.headers.get(VERSION_HEADER)
    if header in LEGACY_VERSIONS:
        return LEGACY
    if header in MODERN_VERSIONS:
        return MODERN
    meta = message.params.get("_meta") if isinstance(message, (Request, Notification)) else None
    if isinstance(meta, dict) and META_PROTOCOL_VERSION in meta:
        return MODERN
    # An unknown version from a client without a session is told which versions it could use instead;
    # within a session it is a legacy client's mistake, and told so.
    return MODERN if header is not None and SESSION_HEADER not in request.headers else LEGACY


def method_not_allowed() -> Response:
    return rejection(405, "Method Not Allowed", headers={"Allow": "GET, POST, DELETE"})
