"""A JSON Schema as rows a person can read: the tool page's schema table.

Schemas come from upstream servers, so the walk is bounded in depth, in rows and
in text: a hostile schema yields a short table and a note, never a huge page.
"""

import json
from dataclasses import dataclass, field

MAX_DEPTH = 6
MAX_ROWS = 300
MAX_TEXT = 600
MAX_VALUE = 160

# Rendered as the table's own columns and nesting; every other keyword is listed beside its row.
STRUCTURAL = {
    "type",
    "title",
    "description",
    "properties",
    "required",
    "items",
    "prefixItems",
    "anyOf",
    "oneOf",
    "allOf",
    "$defs",
    "definitions",
    "additionalProperties",
}
# The JSON Schema vocabulary (2020-12 and draft-07) shown as constraints; anything else is unknown.
CONSTRAINTS = [
    "enum",
    "const",
    "default",
    "format",
    "pattern",
    "minimum",
    "exclusiveMinimum",
    "maximum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "uniqueItems",
    "contains",
    "minContains",
    "maxContains",
    "minProperties",
    "maxProperties",
    "patternProperties",
    "propertyNames",
    "dependentRequired",
    "dependentSchemas",
    "dependencies",
    "additionalItems",
    "unevaluatedItems",
    "unevaluatedProperties",
    "not",
    "if",
    "then",
    "else",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$ref",
    "$dynamicRef",
    "$recursiveRef",
    "$anchor",
    "$dynamicAnchor",
    "$recursiveAnchor",
    "$id",
    "$schema",
    "$comment",
    "$vocabulary",
]
KNOWN = STRUCTURAL | set(CONSTRAINTS)


@dataclass
class Row:
    name: str
    depth: int
    path: str
    type: str = ""
    required: bool = False
    title: str = ""
    description: str = ""
    constraints: list = field(default_factory=list)
    unknown: list = field(default_factory=list)
    note: str = ""


@dataclass
class SchemaTable:
    root: Row
    rows: list
    truncated: bool = False


def clip(text, limit=MAX_TEXT):
    text = text if isinstance(text, str) else compact(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def compact(value):
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    except (TypeError, ValueError):
        text = repr(value)
    return clip(text, MAX_VALUE)


def type_of(schema):
    if schema is True:
        return "any value"
    if schema is False:
        return "nothing allowed"
    if not isinstance(schema, dict):
        return "invalid schema"
    declared = schema.get("type")
    if isinstance(declared, list):
        names = " | ".join(clip(t, 40) for t in declared)
    elif declared is not None:
        names = clip(declared, 40)
    elif "properties" in schema:
        names = "object"
    elif "items" in schema or "prefixItems" in schema:
        names = "array"
    elif any(k in schema for k in ("anyOf", "oneOf", "allOf")):
        names = "see variants"
    elif "$ref" in schema:
        names = "reference"
    else:
        names = "any"
    items = schema.get("items")
    if names == "array" and isinstance(items, dict) and "type" in items:
        names = f"array of {type_of(items)}"
    return names


class Walk:
    def __init__(self):
        self.rows = []
        self.truncated = False

    def describe(self, row, schema):
        row.type = type_of(schema)
        if isinstance(schema, dict):
            row.title = clip(schema.get("title", ""))
            row.description = clip(schema.get("description", ""))
            row.constraints = [(k, compact(schema[k])) for k in CONSTRAINTS if k in schema]
            additional = schema.get("additionalProperties")
            if isinstance(additional, bool):
                row.constraints.append(("additionalProperties", compact(additional)))
            row.unknown = [(clip(k, 60), compact(v)) for k, v in schema.items() if k not in KNOWN][:20]
        elif schema not in (True, False):
            row.constraints = [("value", compact(schema))]
        return row

    def children(self, schema):
        """(name, subschema, required) for what nests under a schema, in reading order."""
        if not isinstance(schema, dict):
            return
        properties = schema.get("properties")
        required = schema.get("required") if isinstance(schema.get("required"), list) else []
        if isinstance(properties, dict):
            for name, sub in properties.items():
                yield name, sub, name in required
        if isinstance(schema.get("additionalProperties"), dict):
            yield "(other properties)", schema["additionalProperties"], False
        items = schema.get("items")
        if isinstance(items, dict) and (set(items) - {"type", "title", "description"}):
            yield "[items]", items, False
        for keyword in ("prefixItems", "anyOf", "oneOf", "allOf"):
            if isinstance(schema.get(keyword), list):
                for n, sub in enumerate(schema[keyword]):
                    yield f"{keyword}[{n}]", sub, False
        for keyword in ("$defs", "definitions"):
            if isinstance(schema.get(keyword), dict):
                for name, sub in schema[keyword].items():
                    yield f"{keyword}/{name}", sub, False

    def nest(self, parent, schema):
        for name, sub, required in self.children(schema):
            if len(self.rows) >= MAX_ROWS:
                self.truncated = True
                return
            row = Row(
                name=clip(name, 120), depth=parent.depth + 1, path=f"{parent.path}.{name}" if parent.path else name
            )
            row.required = required
            self.rows.append(self.describe(row, sub))
            if row.depth >= MAX_DEPTH:
                if any(True for _ in self.children(sub)):
                    row.note = f"nested deeper than {MAX_DEPTH} levels: see the raw JSON"
                continue
            self.nest(row, sub)


def schema_table(schema):
    """The root's own keywords, and one row per property (and per nested schema), depth first."""
    walk = Walk()
    root = walk.describe(Row(name="", depth=0, path=""), schema)
    walk.nest(root, schema)
    return SchemaTable(root=root, rows=walk.rows, truncated=walk.truncated)
