"""HTTP headers that mirror a request's body, as the 2026-07-28 Streamable HTTP transport asks.

Intermediaries route on these headers without reading the body, and the server
rejects a request whose headers disagree with its body (-32020), so every value
here must be rendered exactly as the spec says.
"""

import base64
import re
from typing import Any

PARAM_PREFIX = "Mcp-Param-"
SENTINEL_PREFIX = "=?base64?"
SENTINEL_SUFFIX = "?="
# Integers travel in decimal only within the range a JavaScript number holds exactly.
MAX_SAFE_INTEGER = 2**53 - 1
# Methods whose subject is mirrored into Mcp-Name, and the param that names it.
NAMED_PARAM = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}

_PLAIN = re.compile(r"[\x20-\x7e]*")  # visible ASCII and space; tabs and other controls are not plain


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


def param_headers(declared: dict[str, list[str]], arguments: dict) -> dict[str, str]:
    """The Mcp-Param-* headers for a call of a tool whose annotations passed x_mcp_header_problems(), given what
    they declare (x_mcp_headers: header to property path).

    An argument that is absent or null gets no header, as the spec says.
    Raises ValueError for an integer outside the range a header can carry.
    """
    headers = {}
    for name, path in declared.items():
        text = render(_value_at(arguments, path))
        if text is not None:
            headers[PARAM_PREFIX + name] = encode_value(text)
    return headers


def _value_at(arguments: Any, path: list[str]) -> Any:
    for key in path:
        if not isinstance(arguments, dict):
            return None
        arguments = arguments.get(key)
    return arguments
