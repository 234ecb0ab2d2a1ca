"""What a queued call risks, as its row and panel show it: a chip, an edge colour, and each annotation by name.

Annotations are the tool's own word about itself, so they count only on a server the admin marked trusted; on
any other the row says "unverified" rather than repeat a claim nobody checked. A tool that says nothing about
writing is taken as one that may write, as the spec's defaults say, but told apart from one that said so.
"""

from dataclasses import dataclass

from approvals.calls.models import Call
from approvals.protocol.tools import DEFAULT_ANNOTATIONS, annotations

# The annotations a panel names, in the spec's order, with the words it uses for them.
NAMES = [
    ("readOnlyHint", "read-only"),
    ("destructiveHint", "destructive"),
    ("idempotentHint", "idempotent"),
    ("openWorldHint", "open world"),
]


@dataclass(frozen=True)
class Annotation:
    name: str
    label: str
    value: bool
    declared: bool  # False: the spec's default, the tool said nothing


@dataclass(frozen=True)
class Risk:
    level: str  # destructive, write, read, unverified, or "" for what is not a tool call
    label: str
    open_world: bool
    annotations: tuple[Annotation, ...]


NONE = Risk("", "", False, ())


def call_risk(call: Call) -> Risk:
    if call.kind != Call.Kind.TOOL or call.tool is None:
        return NONE
    definition = call.tool.definition
    given = definition.get("annotations") if isinstance(definition, dict) else None
    declared = given if isinstance(given, dict) else {}
    hints = annotations(definition)
    named = tuple(Annotation(name, label, hints[name], isinstance(declared.get(name), bool)) for name, label in NAMES)
    if call.server is None or not call.server.trusted:
        return Risk("unverified", "unverified", False, named)
    open_world = declared.get("openWorldHint") is True
    if hints["readOnlyHint"]:
        return Risk("read", "read-only", open_world, named)
    if declared.get("destructiveHint") is True:
        return Risk("destructive", "destructive", open_world, named)
    said = any(isinstance(declared.get(name), bool) for name in DEFAULT_ANNOTATIONS)
    return Risk("write", "may write" if said else "unannotated", open_world, named)
