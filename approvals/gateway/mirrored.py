"""The 2026-07-28 envelope: `_meta` on every request, and headers that mirror the body.

Intermediaries route on the headers without reading the body, so a server that
reads the body must refuse a request whose headers say something else (-32020).
"""

import base64
import binascii
import re
from decimal import Decimal

from approvals.protocol.headers import NAMED_PARAM, PARAM_PREFIX, render
from approvals.protocol.jsonrpc import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    UNSUPPORTED_PROTOCOL_VERSION,
    JsonRpcError,
    Request,
)
from approvals.protocol.revisions import META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION, MODERN_VERSIONS, SUPPORTED
from approvals.protocol.tools import x_mcp_headers

_SENTINEL = re.compile(r"=\?base64\?(.*)\?=", re.DOTALL)
_DECIMAL = re.compile(r"-?[0-9]+(\.[0-9]+)?")


def decode_value(value: str | None) -> str | None:
    """A header value as the client meant it: the base64 sentinel form decoded; None when absent or malformed."""
    if value is None:
        return None
    match = _SENTINEL.fullmatch(value)
    if match is None:
        return value
    try:
        return base64.b64decode(match[1], validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None


def mismatch(message: str) -> JsonRpcError:
    return JsonRpcError(HEADER_MISMATCH, f"Header mismatch: {message}")


def check_envelope(request: Request, headers) -> tuple[str, dict]:
    """The request's protocol version and client capabilities, once its `_meta` and headers agree.

    The order follows the spec's ladder: a client that disagrees with itself is told
    so before it is told that its version is unsupported.
    """
    meta = request.params.get("_meta")
    missing = [
        key
        for key in (META_PROTOCOL_VERSION, META_CLIENT_CAPABILITIES)
        if not isinstance(meta, dict) or key not in meta
    ]
    if missing:
        raise JsonRpcError(INVALID_PARAMS, f"params._meta must carry {' and '.join(missing)}")
    version = meta[META_PROTOCOL_VERSION]
    header_version = headers.get("MCP-Protocol-Version")
    if header_version is None or header_version != version:
        raise mismatch("the MCP-Protocol-Version header is missing or differs from the body's protocol version")
    if headers.get("Mcp-Method") != request.method:
        raise mismatch(f"the Mcp-Method header is missing or differs from the body's method {request.method!r}")
    named = NAMED_PARAM.get(request.method)
    subject = request.params.get(named) if named else None
    if subject is not None and decode_value(headers.get("Mcp-Name")) != subject:
        raise mismatch(f"the Mcp-Name header is missing or differs from the body's {named!r}")
    if version not in MODERN_VERSIONS:
        raise JsonRpcError(
            UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version", {"supported": SUPPORTED, "requested": version}
        )
    capabilities = meta[META_CLIENT_CAPABILITIES]
    if not isinstance(capabilities, dict):
        raise JsonRpcError(INVALID_PARAMS, f"params._meta[{META_CLIENT_CAPABILITIES!r}] must be an object")
    return version, capabilities


def check_param_headers(definition: dict, arguments, headers):
    """Each argument the tool marks with x-mcp-header must travel in its Mcp-Param-* header too, and agree."""
    for header, path in x_mcp_headers(definition).items():
        if "_" in header:
            # Daphne drops every header whose name holds '_' (CVE-2015-0219): such a header never arrives.
            continue
        name = PARAM_PREFIX + header
        sent = headers.get(name)
        value = value_at(arguments, path)
        try:
            expected = render(value)
        except ValueError:
            expected = None
        if expected is None:
            # No value, or none a header can carry: a conforming client sends no header.
            if sent is not None:
                raise mismatch(f"{name} is sent but the argument {'.'.join(path)!r} has no header value")
            continue
        if sent is None:
            raise mismatch(f"{name} is missing for the argument {'.'.join(path)!r}")
        if not same_value(decode_value(sent), expected, value):
            raise mismatch(f"{name} differs from the argument {'.'.join(path)!r}")


def value_at(arguments, path: list[str]):
    for key in path:
        if not isinstance(arguments, dict):
            return None
        arguments = arguments.get(key)
    return arguments


def same_value(sent: str | None, expected: str, value) -> bool:
    if sent is None:
        return False
    if sent == expected:
        return True
    # The spec asks integers to compare as numbers: 42.0 in a header matches 42 in the body.
    is_number = isinstance(value, (int, float)) and not isinstance(value, bool)
    return is_number and _DECIMAL.fullmatch(sent) is not None and Decimal(sent) == Decimal(expected)
