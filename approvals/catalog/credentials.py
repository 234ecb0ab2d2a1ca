"""A server's credentials as an admin types them: 'Name: value' header lines and 'KEY=value' environment lines."""

import re

HTTP_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# The console sets these itself on every upstream request.
RESERVED_HEADERS = {
    "accept",
    "content-type",
    "content-length",
    "host",
    "connection",
    "transfer-encoding",
    "mcp-session-id",
    "mcp-protocol-version",
    "mcp-method",
    "mcp-name",
    "last-event-id",
}


def key_value_lines(lines, sep: str, name_pattern: re.Pattern, what: str, form: str):
    """(name, value) of each 'name<sep>value' line, skipping blank ones; a bad line is a ValueError naming it."""
    for line in lines:
        if not line.strip():
            continue
        name, found, value = line.partition(sep)
        if not found or not name_pattern.match(name.strip()):
            raise ValueError(f"{what} {line!r} is not {form}")
        yield name.strip(), value


def parse_header_lines(lines):
    """'Name: value' lines into a dict, with an error naming the first bad line."""
    headers = {}
    for name, value in key_value_lines(lines, ":", HTTP_TOKEN, "header", "'Name: value' with a valid header name"):
        value = value.strip()
        if name.lower() in RESERVED_HEADERS or name.lower().startswith("mcp-param-"):
            raise ValueError(f"header {name!r} is set by the console itself")
        if any(ord(c) < 32 and c != "\t" for c in value):
            raise ValueError(f"header {name!r} has a control character in its value")
        if name.lower() in {known.lower() for known in headers}:
            raise ValueError(f"header {name!r} is given twice")
        headers[name] = value
    return headers


def parse_env_lines(lines):
    """'KEY=value' lines into a dict (values kept as written), with an error naming the first bad line."""
    return dict(key_value_lines(lines, "=", ENV_NAME, "environment line", "KEY=value"))
