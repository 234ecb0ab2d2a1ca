"""Tool definitions from upstream servers: whether to accept one, its digest, and what of it is safe to use.

Everything here reads a definition as the untrusted JSON an upstream server
sent. Unknown fields are kept and ignored (later revisions add some); a known
optional field that is null counts as absent, as the Python SDK reads it.
"""

import base64
import binascii
import re
from collections import deque
from dataclasses import dataclass

from approvals.protocol.canonical import sha256_digest
from approvals.protocol.schemas import SchemaError, check_schema

HEADER_KEY = "x-mcp-header"
MAX_ICON_BYTES = 64 * 1024
DEFAULT_ANNOTATIONS = {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False, "openWorldHint": True}

_NAME = re.compile(r"[A-Za-z0-9_.-]{1,128}")
# The 2026-07-28 tools page allows "ASCII except space and ':'", yet only RFC 9110
# token characters can form the Mcp-Param-{name} field name the console must send;
# the spec's clarification (modelcontextprotocol PR #2772) adopted this same rule.
_NOT_TOKEN_CHAR = re.compile(r"[^!#$%&'*+.^_`|~0-9A-Za-z-]")
# The 2026-07-28 transport page, which says how values travel, names these three; a
# number has no header form there, so the console could not send one faithfully.
_HEADER_TYPES = {"string", "integer", "boolean"}
_OPTIONAL_FIELDS = {
    "title": str,
    "description": str,
    "annotations": dict,
    "icons": list,
    "execution": dict,
    "_meta": dict,
}
_TYPE_NAMES = {str: "a string", dict: "an object", list: "a list"}
# Keywords whose values hold subschemas, drafts 4 to 2020-12. An x-mcp-header below
# any of them is not on a property reached through plain `properties`.
_SUBSCHEMA_MAPS = {"properties", "patternProperties", "dependentSchemas", "dependencies", "$defs", "definitions"}
_SUBSCHEMA_KEYWORDS = _SUBSCHEMA_MAPS | {
    "items",
    "additionalItems",
    "prefixItems",
    "contains",
    "additionalProperties",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "contentSchema",
}
_RASTER_SIGNATURES = {
    "image/png": re.compile(rb"\x89PNG\r\n\x1a\n"),
    "image/jpeg": re.compile(rb"\xff\xd8\xff"),
    "image/gif": re.compile(rb"GIF8[79]a"),
    "image/webp": re.compile(rb"RIFF....WEBP", re.DOTALL),
}
_DATA_URL = re.compile(r"data:([a-z]+/[a-z0-9.+-]+);base64,([A-Za-z0-9+/]*={0,2})", re.IGNORECASE)


@dataclass(frozen=True)
class ToolCheck:
    errors: list[str]
    warnings: list[str]

    @property
    def ok(self) -> bool:
        return not self.errors


def _subschemas(location: tuple, node: dict):
    for keyword, value in node.items():
        if keyword in _SUBSCHEMA_MAPS and isinstance(value, dict):
            yield from (((*location, keyword, name), sub) for name, sub in value.items())
        elif keyword in _SUBSCHEMA_KEYWORDS and isinstance(value, list):
            yield from (((*location, keyword, str(index)), sub) for index, sub in enumerate(value))
        elif keyword in _SUBSCHEMA_KEYWORDS:
            yield (*location, keyword), value


def _header_sites(schema):
    """(location, subschema) for each subschema carrying x-mcp-header, in breadth-first document order."""
    queue = deque([((), schema)])
    while queue:
        location, node = queue.popleft()
        if isinstance(node, dict):
            if HEADER_KEY in node:
                yield location, node
            queue.extend(_subschemas(location, node))


def _header_problem(header, node: dict, location: tuple) -> str:
    if not isinstance(header, str) or not header:
        return "must be a non-empty string"
    bad = _NOT_TOKEN_CHAR.search(header)
    if bad:
        return f"contains {bad[0]!r}; a header name may hold only letters, digits and !#$%&'*+-.^_`|~"
    detour = next((keyword for keyword in location[::2] if keyword != "properties"), None)
    if detour is not None:
        return f"is not on a property reached through plain 'properties' from the root (it sits under {detour!r})"
    if not location:
        return "must sit on a property, not on the schema itself"
    kind = node.get("type")
    if not isinstance(kind, str) or kind not in _HEADER_TYPES:
        return f"needs a property of type string, integer or boolean, not {kind!r}"
    return ""


def _place(location: tuple) -> str:
    if location and all(keyword == "properties" for keyword in location[::2]):
        return f"on property {'.'.join(location[1::2])!r}"
    return f"at {'.'.join(location)!r}" if location else "on the schema root"


def _scan_headers(schema) -> tuple[dict[str, list[str]], list[str]]:
    owners, errors = {}, []  # lowercased header -> (header, property path)
    for location, node in _header_sites(schema):
        header = node[HEADER_KEY]
        problem = _header_problem(header, node, location)
        if problem:
            errors.append(f"{HEADER_KEY} {header!r} {_place(location)} {problem}")
        elif header.lower() in owners:
            first, path = owners[header.lower()]
            errors.append(
                f"{HEADER_KEY} {header!r} {_place(location)} repeats {first!r} of property {'.'.join(path)!r}; "
                "header names must differ regardless of case"
            )
        else:
            owners[header.lower()] = (header, list(location[1::2]))
    return dict(owners.values()), errors


def _object_schema_errors(field: str, schema) -> list[str]:
    if not isinstance(schema, dict):
        return [f"{field} must be a JSON Schema object"]
    if schema.get("type") != "object":
        return [f'{field} must have "type": "object"']
    try:
        check_schema(schema)
    except SchemaError as exc:
        return [f"{field} is not a usable JSON Schema: {exc.reason}"]
    return []


def _annotation_errors(given) -> list[str]:
    if not isinstance(given, dict):
        return []
    errors = [
        f"annotations.{hint} must be true or false"
        for hint in DEFAULT_ANNOTATIONS
        if given.get(hint) is not None and not isinstance(given[hint], bool)
    ]
    if given.get("title") is not None and not isinstance(given["title"], str):
        errors.append("annotations.title must be a string")
    return errors


def _icon_errors(icons) -> list[str]:
    if not isinstance(icons, list):
        return []
    return [
        f"icons[{index}] must be an object with a string src"
        for index, icon in enumerate(icons)
        if not isinstance(icon, dict) or not isinstance(icon.get("src"), str)
    ]


def check_tool(definition) -> ToolCheck:
    """Whether the console may list a tool: errors reject it, warnings are shown with it."""
    if not isinstance(definition, dict):
        return ToolCheck(["a tool definition must be a JSON object"], [])
    errors, warnings = [], []
    name = definition.get("name")
    if not isinstance(name, str):
        errors.append("name must be a string")
    elif not _NAME.fullmatch(name):
        warnings.append(f"name {name!r} breaks the spec's rule: 1 to 128 characters of A-Z, a-z, 0-9, '_', '-' and '.'")
    for key, kind in _OPTIONAL_FIELDS.items():
        if definition.get(key) is not None and not isinstance(definition[key], kind):
            errors.append(f"{key} must be {_TYPE_NAMES[kind]}")
    errors += _object_schema_errors("inputSchema", definition.get("inputSchema"))
    if definition.get("outputSchema") is not None:
        errors += _object_schema_errors("outputSchema", definition["outputSchema"])
    errors += x_mcp_header_problems(definition)
    errors += _annotation_errors(definition.get("annotations"))
    errors += _icon_errors(definition.get("icons"))
    return ToolCheck(errors, warnings)


def x_mcp_header_scan(definition) -> tuple[dict[str, list[str]], list[str]]:
    """x_mcp_headers and x_mcp_header_problems of one tool, its schema read once."""
    if not isinstance(definition, dict):
        return {}, ["not a tool definition"]
    return _scan_headers(definition.get("inputSchema"))


def x_mcp_headers(definition) -> dict[str, list[str]]:
    """Header name (as declared, without Mcp-Param-) to the property path whose value it carries.

    Meant for tools check_tool accepted; on others it leaves out the annotations that break the rules.
    """
    return x_mcp_header_scan(definition)[0]


def x_mcp_header_problems(definition) -> list[str]:
    """Why a tool's x-mcp-header annotations break the spec's rules; empty when they are all valid."""
    return x_mcp_header_scan(definition)[1]


def tool_digest(definition) -> str:
    """SHA-256 over the whole canonical definition, unknown fields included: any change changes it."""
    return sha256_digest(definition)


def _is_safe_icon(icon) -> bool:
    src = icon.get("src") if isinstance(icon, dict) else None
    if not isinstance(src, str) or len(src) > MAX_ICON_BYTES:
        return False
    match = _DATA_URL.fullmatch(src)
    if match is None or match[1].lower() not in _RASTER_SIGNATURES:
        return False
    declared = icon.get("mimeType")
    if declared is not None and (not isinstance(declared, str) or declared.lower() != match[1].lower()):
        return False
    try:
        data = base64.b64decode(match[2], validate=True)
    except binascii.Error:
        return False
    # A declared type the bytes contradict could be anything; a browser must not be left to sniff it.
    return _RASTER_SIGNATURES[match[1].lower()].match(data) is not None


def safe_icons(definition) -> list[dict]:
    """The icons the console may show: small base64 data: URLs of PNG, JPEG, GIF or WebP whose bytes agree."""
    icons = definition.get("icons") if isinstance(definition, dict) else None
    return [icon for icon in icons if _is_safe_icon(icon)] if isinstance(icons, list) else []


def annotations(definition) -> dict:
    """The tool's annotations with the spec's defaults for absent or malformed hints; untrusted unless the server is."""
    given = definition.get("annotations") if isinstance(definition, dict) else None
    if not isinstance(given, dict):
        return dict(DEFAULT_ANNOTATIONS)
    well_typed = {
        key: value for key, value in given.items() if isinstance(value, bool) or key not in DEFAULT_ANNOTATIONS
    }
    return {**DEFAULT_ANNOTATIONS, **well_typed}
