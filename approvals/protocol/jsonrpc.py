"""JSON-RPC 2.0 messages as MCP uses them: one message per body, no batches."""

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

import orjson

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
# resources/read of an unknown URI in the 2025 revisions (2026-07-28 answers it as INVALID_PARAMS).
RESOURCE_NOT_FOUND = -32002
# Codes the 2026-07-28 revision allocates from -32020 on.
HEADER_MISMATCH = -32020
MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
UNSUPPORTED_PROTOCOL_VERSION = -32022
URL_ELICITATION_REQUIRED = -32042


class JsonRpcError(Exception):
    """An error to answer in JSON-RPC terms, or one a peer answered with."""

    def __init__(self, code: int, message: str, data: Any = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_dict(self) -> dict:
        error = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error

    def __repr__(self):
        return f"JsonRpcError({self.code}, {self.message!r})"


@dataclass(frozen=True)
class Request:
    id: str | int
    method: str
    params: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Notification:
    method: str
    params: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Response:
    id: str | int | None
    result: dict | None = None
    error: JsonRpcError | None = None


Message = Request | Notification | Response


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not a JSON number")


def _finite(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(f"{text[:40]} is beyond the largest number a double holds")
    return number


# orjson reads an integer past 64 bits as a float: a value with 19 digits in a row goes to the json module.
_LONG_DIGITS = re.compile(r"[0-9]{19}")
_LONG_DIGITS_BYTES = re.compile(rb"[0-9]{19}")
# A \uD800-\uDFFF escape: the only way a lone surrogate gets into text that decoded as UTF-8.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _strings(value: Any):
    """Every string in a JSON value, object keys included; without recursion, as a value may nest as deep as
    JSON parsing allows."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            yield node
        elif isinstance(node, dict):
            stack.extend(node)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def decode(body: bytes | str) -> Any:
    """One JSON value from UTF-8 text, as MCP sends it; a parse error otherwise.

    Refused as well: NaN, Infinity and numbers too large for a double (``1e999``), which
    Python's json would read as infinities no JSON can hold, and strings holding an
    unpaired surrogate (``"\\ud800"``), which I-JSON (RFC 7493) forbids: no UTF-8 text
    can carry one, so nothing could be answered, stored or passed on.

    orjson reads what it refuses the same way and reads faster; the json module reads the rest
    (integers orjson would turn into floats) and says, in its words, what is wrong with a bad body.
    """
    if not (_LONG_DIGITS_BYTES if isinstance(body, (bytes, bytearray)) else _LONG_DIGITS).search(body):
        try:
            return orjson.loads(body)
        except orjson.JSONDecodeError:
            pass
    try:
        text = body.decode("utf-8") if isinstance(body, (bytes, bytearray)) else body
        value = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite)
    except ValueError as exc:
        raise JsonRpcError(PARSE_ERROR, f"Parse error: {exc}") from None
    except RecursionError:
        raise JsonRpcError(PARSE_ERROR, "Parse error: nested too deeply") from None
    if _SURROGATE_ESCAPE.search(text) and any(_SURROGATE.search(string) for string in _strings(value)):
        raise JsonRpcError(PARSE_ERROR, "Parse error: a string holds an unpaired surrogate, which is not Unicode text")
    return value


def has_nul(value: Any) -> bool:
    """Whether any string or key holds U+0000, which PostgreSQL cannot store in text or JSON."""
    return any("\x00" in string for string in _strings(value))


def without_nul(value: Any) -> Any:
    """A copy of the value with every U+0000 turned into U+FFFD, the replacement character."""
    holder = [value]
    stack = [(holder, 0)]
    while stack:
        container, key = stack.pop()
        node = container[key]
        if isinstance(node, str):
            container[key] = node.replace("\x00", "\ufffd")
        elif isinstance(node, dict):
            container[key] = copy = {name.replace("\x00", "\ufffd"): item for name, item in node.items()}
            stack.extend((copy, name) for name in copy)
        elif isinstance(node, list):
            container[key] = copy = list(node)
            stack.extend((copy, index) for index in range(len(copy)))
    return holder[0]


def parse_message(obj: Any) -> Message:
    """Classify one decoded JSON value as a request, notification or response."""
    if isinstance(obj, list):
        raise JsonRpcError(INVALID_REQUEST, "Invalid request: batches are not supported")
    if not isinstance(obj, dict):
        raise JsonRpcError(INVALID_REQUEST, "Invalid request: a message must be a JSON object")
    if obj.get("jsonrpc") != "2.0":
        raise JsonRpcError(INVALID_REQUEST, 'Invalid request: "jsonrpc" must be "2.0"')
    has_id = "id" in obj
    msg_id = obj.get("id")
    # Only an error response may carry a null id (the request it answers was unreadable).
    null_id_allowed = "error" in obj and "method" not in obj and msg_id is None
    if has_id and (isinstance(msg_id, bool) or not isinstance(msg_id, (str, int))) and not null_id_allowed:
        raise JsonRpcError(INVALID_REQUEST, 'Invalid request: "id" must be a string or an integer')
    if "method" in obj and ("result" in obj or "error" in obj):
        raise JsonRpcError(INVALID_REQUEST, "Invalid request: a message is either a request or a response, not both")
    if "method" in obj:
        method = obj["method"]
        if not isinstance(method, str) or not method:
            raise JsonRpcError(INVALID_REQUEST, 'Invalid request: "method" must be a non-empty string')
        params = obj.get("params", {})
        if params is None:
            params = {}
        if not isinstance(params, dict):
            raise JsonRpcError(INVALID_REQUEST, 'Invalid request: "params" must be an object')
        if has_id:
            return Request(msg_id, method, params)
        return Notification(method, params)
    if has_id and "result" in obj and "error" not in obj:
        result = obj["result"]
        if not isinstance(result, dict):
            raise JsonRpcError(INVALID_REQUEST, 'Invalid response: "result" must be an object')
        return Response(msg_id, result=result)
    if has_id and "error" in obj and "result" not in obj:
        error = obj["error"]
        if not isinstance(error, dict) or not isinstance(error.get("code"), int) or isinstance(error.get("code"), bool):
            raise JsonRpcError(INVALID_REQUEST, 'Invalid response: "error" must hold an integer "code"')
        message = error.get("message")
        return Response(
            msg_id, error=JsonRpcError(error["code"], message if isinstance(message, str) else "", error.get("data"))
        )
    raise JsonRpcError(INVALID_REQUEST, "Invalid request: neither a request, a notification nor a response")


def request(msg_id: str | int, method: str, params: dict | None = None) -> dict:
    message = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def notification(method: str, params: dict | None = None) -> dict:
    message = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return message


def result(msg_id: str | int | None, value: dict) -> dict:
    return {"jsonrpc": "2.0", "id": msg_id, "result": value}


def error(msg_id: str | int | None, exc: JsonRpcError) -> dict:
    return {"jsonrpc": "2.0", "id": msg_id, "error": exc.to_dict()}


def encode(message: dict) -> bytes:
    """Compact UTF-8 JSON; not the audit chain's canonical form (protocol.canonical)."""
    try:
        return orjson.dumps(message)
    except orjson.JSONEncodeError:
        # What orjson will not write (integers past 64 bits, keys that are not strings), json writes as it did.
        return json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode()
