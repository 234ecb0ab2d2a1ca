"""What a demo tool is made of, and what it may ask of the call it runs in."""

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from jsonschema import Draft202012Validator

from approvals.demo.data import Store
from approvals.demo.png import disc_icon

# Titled single-select enums (`oneOf` of const/title) and the explicit `mode` field arrived in
# 2025-11-25; revisions are ISO dates, so a plain string comparison orders them.
TITLED_ENUMS_SINCE = "2025-11-25"


class InputRequired(Exception):
    """A 2026-07-28 tool needs answers first: the server replies `input_required`, the retry reruns the tool."""

    def __init__(self, requests: dict):
        super().__init__("input required")
        self.requests = requests


class InputUnavailable(Exception):
    """The tool cannot get the input it needs; the message says why, for the model to read."""


@dataclass
class CallContext:
    store: Store
    version: str
    can_elicit: bool
    # Era-specific: a server-to-client request (legacy) or an answer from the retry (modern).
    ask: Callable[[str, dict], Awaitable[dict]]
    progress: Callable[[float, float | None, str | None], None]
    log: Callable[[str, str], None]

    @property
    def titled_enums(self) -> bool:
        return self.version >= TITLED_ENUMS_SINCE

    async def elicit(self, key: str, message: str, schema: dict) -> dict:
        """Ask a person to fill a form; returns the client's ElicitResult ({action, content?})."""
        if not self.can_elicit:
            raise InputUnavailable(
                "elicitation is unavailable: this client did not declare the elicitation (form) capability, "
                "so the tool cannot ask a person for the details it needs"
            )
        params = {"message": message, "requestedSchema": schema}
        if self.titled_enums:
            params = {"mode": "form", **params}
        answer = await self.ask(key, {"method": "elicitation/create", "params": params})
        content = answer.get("content")
        if answer.get("action") not in ("accept", "decline", "cancel") or not isinstance(content, (dict, type(None))):
            raise InputUnavailable("the client answered the form with a malformed result")
        return answer


# What a tool that only reads the in-memory records can honestly claim.
READ_ONLY = {"readOnlyHint": True, "idempotentHint": True, "openWorldHint": False}

Handler = Callable[[CallContext, dict], Awaitable[dict]]


@dataclass(frozen=True)
class Tool:
    name: str
    title: str
    description: str
    input_schema: dict
    annotations: dict
    handler: Handler
    output_schema: dict | None = None
    icon: str | None = None


def tool(
    *,
    title: str,
    input_schema: dict,
    annotations: dict,
    color: tuple,
    output_schema: dict | None = None,
) -> Callable[[Handler], Tool]:
    """Makes the handler below a Tool of its name, described by its docstring, with a disc of `color` as its icon."""

    def declare(handler: Handler) -> Tool:
        return Tool(
            name=handler.__name__,
            title=title,
            # The docstring's lines make one paragraph for the model.
            description=" ".join(handler.__doc__.split()),
            input_schema=input_schema,
            annotations=annotations,
            handler=handler,
            output_schema=output_schema,
            icon=disc_icon(color),
        )

    return declare


def text(value: str, is_error: bool = False) -> dict:
    result = {"content": [{"type": "text", "text": value}]}
    if is_error:
        result["isError"] = True
    return result


def error(value: str) -> dict:
    return text(value, is_error=True)


def scalar(kind: str, title: str, description: str, **schema) -> dict:
    """A property of JSON type `kind`, with the title and description a form or a model reads."""
    return {"type": kind, "title": title, "description": description, **schema}


def string(title: str, description: str, **schema) -> dict:
    return scalar("string", title, description, **schema)


def arguments(properties: dict, required: list[str] | None = None) -> dict:
    """A tool's input schema: an object that takes these properties and no others."""
    needed = {"required": required} if required else {}
    return {"type": "object", "properties": properties, **needed, "additionalProperties": False}


def choice(title: str, description: str, options: dict[str, str], titled: bool, **schema) -> dict:
    """A string picked from `options` (value → label), labelled the way the schema's revision allows."""
    if titled:
        return string(title, description, oneOf=[{"const": v, "title": t} for v, t in options.items()], **schema)
    return string(title, description, enum=list(options), enumNames=list(options.values()), **schema)


def schema_problems(schema: dict, instance: dict) -> list[str]:
    """Every way `instance` breaks `schema` (JSON Schema 2020-12), phrased for a model to fix."""
    validator = Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
    problems = []
    for problem in sorted(validator.iter_errors(instance), key=lambda e: [str(part) for part in e.absolute_path]):
        where = "/".join(str(part) for part in problem.absolute_path)
        problems.append(f"{where}: {problem.message}" if where else problem.message)
    return problems
