"""HTTP headers that mirror a request's body, as the 2026-07-28 Streamable HTTP transport asks.

Intermediaries route on these headers without reading the body, and the server
rejects a request whose headers disagree with its body (-32020), so every value
here must be rendered exactly as the spec says.
"""

import base64
import re
from typing import Any

X_MCP_HEADER = "x-mcp-header"
PARAM_PREFIX = "Mcp-Param-"
SENTINEL_PREFIX = "=?base64?"
SENTINEL_SUFFIX = "?="
# Integers travel in decimal only within the range a JavaScript number holds exactly.
MAX_SAFE_INTEGER = 2**53 - 1
# Methods whose subject is mirrored into Mcp-Name, and the param that names it.
NAMED_PARAM = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}

_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")  # RFC 9110 field-name token
_PLAIN = re.compile(r"[\x20-\x7e]*")  # visible ASCII and space; tabs and other controls are not plain
_HEADER_TYPES = ("string", "integer", "boolean")
# Keywords whose values are instance data, not schemas: an x-mcp-header key inside them is no annotation.
_INSTANCE_KEYWORDS = frozenset({"const", "default", "enum", "examples"})


def encode_value(value: str) -> str:
    """A header value that carries `value` exactly: as-is when plain, else the base64 sentinel form."""
    plain = (
        _PLAIN.fullmatch(value)
        and not value.startswith(" ")
        and not value.endswith(" ")
        # A plain value that looks like the sentinel would be decoded by the receiver.
        and not (value.startswith(SENTINEL_PREFIX) and value.endswith(SENTINEL_SUFFIX))
    )
    if plain:
        return value
    return SENTINEL_PREFIX + base64.b64encode(value.encode("utf-8")).decode("ascii") + SENTINEL_SUFFIX


def render(value: Any) -> str | None:
    """The text of a primitive argument (None when it has no header form); raises ValueError out of range."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int):
        if abs(value) > MAX_SAFE_INTEGER:
            raise ValueError(f"integer {value} is outside the range an Mcp-Param header can carry")
        return str(value)
    if isinstance(value, str):
        return value
    return None


def request_headers(version: str, method: str, params: dict) -> dict[str, str]:
    """The headers every 2026-07-28 POST carries: version, method and, for named methods, the name."""
    headers = {"MCP-Protocol-Version": version, "Mcp-Method": method}
    subject = params.get(NAMED_PARAM.get(method, ""))
    if isinstance(subject, str):
        headers["Mcp-Name"] = encode_value(subject)
    return headers


def invalid_annotation(input_schema: Any) -> str | None:
    """Why a tool's x-mcp-header annotations break the spec's rules, or None when they are all valid.

    The walk enters every keyword except instance data, so an annotation hidden
    under an unfamiliar applicator is found (and refused) rather than missed.
    """
    seen: dict[str, str] = {}
    stack: list[tuple[tuple[str, ...] | None, Any]] = [((), input_schema)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, list):
            stack.extend((None, item) for item in node)
            continue
        if not isinstance(node, dict):
            continue
        if X_MCP_HEADER in node:
            problem = _annotation_problem(path, node, seen)
            if problem:
                return problem
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                stack.extend(((*path, name) if path is not None else None, sub) for name, sub in value.items())
            elif key not in _INSTANCE_KEYWORDS:
                stack.append((None, value))
    return None


def _annotation_problem(path, schema: dict, seen: dict[str, str]) -> str | None:
    if not path:
        return f"{X_MCP_HEADER} sits where a plain chain of 'properties' does not reach"
    where = ".".join(path)
    token = schema[X_MCP_HEADER]
    if not isinstance(token, str) or not _TOKEN.fullmatch(token):
        return f"{X_MCP_HEADER} on {where!r} is not an HTTP header-name token"
    if schema.get("type") not in _HEADER_TYPES:
        return f"{X_MCP_HEADER} on {where!r} is on a property whose type is not string, integer or boolean"
    if token.lower() in seen:
        return f"{X_MCP_HEADER} {token!r} on {where!r} repeats the one on {seen[token.lower()]!r}"
    seen[token.lower()] = where
    return None


def param_headers(input_schema: Any, arguments: dict) -> dict[str, str]:
    """The Mcp-Param-* headers for a call; the schema must have passed invalid_annotation().

    An argument that is absent or null gets no header, as the spec says.
    Raises ValueError for an integer outside the range a header can carry.
    """
    headers = {}
    stack: list[tuple[tuple[str, ...], Any]] = [((), input_schema)]
    while stack:
        path, schema = stack.pop()
        if not isinstance(schema, dict):
            continue
        if path and isinstance(schema.get(X_MCP_HEADER), str):
            text = render(_value_at(arguments, path))
            if text is not None:
                headers[PARAM_PREFIX + schema[X_MCP_HEADER]] = encode_value(text)
        properties = schema.get("properties")
        if isinstance(properties, dict):
            stack.extend(((*path, name), sub) for name, sub in properties.items())
    return headers


def _value_at(arguments: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(arguments, dict):
            return None
        arguments = arguments.get(key)
    return arguments
