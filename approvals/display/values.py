"""JSON values as a tree a person can read, labelled from the schema that describes them.

Arguments come from a model and results from an upstream server, so the walk is
bounded like the schema table: in depth, in nodes and in text shown.
"""

import json
from dataclasses import dataclass, field

from approvals.display.schema import clip

MAX_DEPTH = 8
MAX_NODES = 400
MAX_STRING = 20_000
FOLD_CHARS = 160
FOLD_LINES = 3


@dataclass
class Node:
    name: str
    kind: str
    title: str = ""
    description: str = ""
    text: str = ""
    folded: bool = False
    undeclared: bool = False
    children: list = field(default_factory=list)
    note: str = ""

    @property
    def preview(self):
        return self.text.split("\n", 1)[0][:FOLD_CHARS]

    @property
    def lines(self):
        return self.text.count("\n") + 1


@dataclass
class Tree:
    nodes: list
    truncated: bool = False


def kind_of(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "unknown"


def scalar_text(value) -> str:
    if isinstance(value, str):
        return (
            value if len(value) <= MAX_STRING else value[:MAX_STRING] + f"… ({len(value) - MAX_STRING} more characters)"
        )
    return json.dumps(value)


def property_schema(schema, name):
    """The subschema for one property, and whether the schema declares it."""
    if not isinstance(schema, dict):
        return {}, False
    properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    if name in properties:
        return properties[name], True
    additional = schema.get("additionalProperties")
    return (additional if isinstance(additional, dict) else {}), False


def item_schema(schema, index):
    if not isinstance(schema, dict):
        return {}
    prefix = schema.get("prefixItems")
    if isinstance(prefix, list) and index < len(prefix):
        return prefix[index]
    items = schema.get("items")
    return items if isinstance(items, dict) else {}


class Walk:
    def __init__(self):
        self.count = 0
        self.truncated = False

    def node(self, name, value, schema, depth, declared=True) -> Node:
        self.count += 1
        schema = schema if isinstance(schema, dict) else {}
        node = Node(
            name=clip(name, 120),
            kind=kind_of(value),
            undeclared=not declared,
            title=clip(schema.get("title", ""), 200),
            description=clip(schema.get("description", "")),
        )
        if node.kind in ("object", "array"):
            if depth >= MAX_DEPTH:
                node.note = f"nested deeper than {MAX_DEPTH} levels: see the raw JSON"
            else:
                node.children = self.children(value, schema, depth + 1)
            return node
        node.text = scalar_text(value)
        node.folded = node.kind == "string" and (len(node.text) > FOLD_CHARS or node.text.count("\n") >= FOLD_LINES)
        return node

    def children(self, value, schema, depth) -> list:
        if isinstance(value, dict):
            declared = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
            # Declared properties in the schema's order, then whatever else was sent.
            names = [n for n in declared if n in value] + [n for n in value if n not in declared]
            pairs = ((n, value[n], *property_schema(schema, n)) for n in names)
        else:
            pairs = ((f"[{i}]", item, item_schema(schema, i), True) for i, item in enumerate(value))
        nodes = []
        for name, item, sub, declared in pairs:
            if self.count >= MAX_NODES:
                self.truncated = True
                break
            nodes.append(self.node(name, item, sub, depth, declared))
        return nodes


def value_tree(value, schema) -> Tree:
    """An object's properties (or an array's items, or one scalar) as nodes, depth first."""
    walk = Walk()
    schema = schema if isinstance(schema, dict) else {}
    nodes = walk.children(value, schema, 1) if isinstance(value, (dict, list)) else [walk.node("", value, schema, 1)]
    return Tree(nodes=nodes, truncated=walk.truncated)
