"""JSON Schema for tools' inputSchema and outputSchema: which draft, whether usable, bounded validation.

``$schema`` picks the draft: 2020-12 when absent, else 2020-12, 2019-09, draft-07,
-06 or -04 (``http``/``https`` and a trailing ``#`` do not matter); any other is
a SchemaError, since the wrong draft accepts or refuses the wrong arguments.
A ``$ref``/``$dynamicRef`` may point only inside the schema (or at a draft's
metaschema, which jsonschema ships): every one is tried when the schema is
checked, the registry refuses to retrieve anything, nothing is ever fetched.

Bounds, since schemas and structured results come from untrusted upstream
servers and arguments from a model:
- schema: ``MAX_SCHEMA_BYTES`` of canonical JSON, ``MAX_DEPTH`` nested containers;
- ``pattern`` and ``patternProperties`` keys: ``MAX_PATTERN_CHARS``, and only what
  RE2 can express (approvals.protocol.patterns), which matches in time linear in
  the string; nothing is ever matched with Python's backtracking ``re``;
- instance: ``MAX_INSTANCE_BYTES``, ``MAX_DEPTH`` nested containers, object keys
  and pattern-matched strings of ``MAX_MATCHED_CHARS``: linear time is still time
  times the pattern's size, and this keeps one match to a fraction of a second;
- one validation: ``MAX_SECONDS``, checked before each keyword and each pattern
  match, so one keyword can overrun by its own cost, which the bounds above keep
  small (``uniqueItems`` is checked by hashing, in linear time, not by
  jsonschema's pairwise comparison);
- messages: ``MAX_MESSAGES``, each of at most ``MESSAGE_CHARS``.
"""

import hashlib
import json
import re
import time
from dataclasses import dataclass, field
from functools import lru_cache

import referencing.jsonschema
from jsonschema.exceptions import best_match
from jsonschema_specifications import REGISTRY as METASCHEMAS
from referencing import Registry
from referencing.exceptions import NoSuchResource, Unresolvable

from approvals.protocol import dialects, patterns
from approvals.protocol.canonical import canonical_json
from approvals.protocol.dialects import MAX_MATCHED_CHARS

MAX_SCHEMA_BYTES = 256 * 1024
MAX_INSTANCE_BYTES = 1024 * 1024
MAX_DEPTH = 48
MAX_PATTERN_CHARS = 512
MAX_SECONDS = 2.0
# A budget an event loop may give one validation: less than a hop to a thread and back costs it.
QUICK_SECONDS = 0.001
MAX_MESSAGES = 20
MESSAGE_CHARS = 300
CACHE_SIZE = 256

DEFAULT_DIALECT = "https://json-schema.org/draft/2020-12/schema"


class SchemaError(ValueError):
    """A schema the console will not use; ``reason`` says why, for an admin to read."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def _refuse(uri: str):
    raise NoSuchResource(ref=uri)


_PLAIN_KEY = re.compile(r"[A-Za-z_$][A-Za-z0-9_$-]*")


def _location(root: str, path) -> str:
    text = root
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        elif _PLAIN_KEY.fullmatch(part):
            text += f".{part}" if text else part
        else:
            text += f"[{json.dumps(part, ensure_ascii=False)}]"
    return text


def _clip(text: str) -> str:
    return text if len(text) <= MESSAGE_CHARS else text[: MESSAGE_CHARS - 1] + "…"


def _shape_problem(value) -> str | None:
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children = list(node.values())
            longest = max((len(key) for key in node if isinstance(key, str)), default=0)
            if longest > MAX_MATCHED_CHARS:
                return f"has an object key {longest} characters long, more than {MAX_MATCHED_CHARS}"
        elif isinstance(node, list):
            children = node
        else:
            continue
        if depth > MAX_DEPTH:
            return f"is nested more than {MAX_DEPTH} levels deep"
        stack.extend((child, depth + 1) for child in children)
    return None


def _encoded(value, limit: int, encoded: bytes | None = None) -> bytes:
    """Canonical JSON of ``value`` (``encoded`` when the caller has it) within the bounds; ValueError says how it
    is out of them."""
    problem = _shape_problem(value)
    if problem is not None:
        raise ValueError(problem)
    try:
        encoded = canonical_json(value) if encoded is None else encoded
    except ValueError as exc:
        raise ValueError(f"is not plain JSON: {exc}") from None
    if len(encoded) > limit:
        raise ValueError(f"is {len(encoded)} bytes of JSON, more than the {limit} the console accepts")
    return encoded


def _check_pattern(pattern: str) -> None:
    if len(pattern) > MAX_PATTERN_CHARS:
        raise SchemaError(f"a pattern is {len(pattern)} characters long, more than {MAX_PATTERN_CHARS}")
    try:
        patterns.compiled(pattern)
    except patterns.PatternError as exc:
        raise SchemaError(exc.reason) from None


def _check_subschemas(registry: Registry, root: referencing.Resource) -> None:
    stack = [(registry.resolver(base_uri=root.id() or ""), root)]
    while stack:
        resolver, resource = stack.pop()
        contents = resource.contents
        if isinstance(contents, dict):
            for keyword in ("$ref", "$dynamicRef"):
                ref = contents.get(keyword)
                if isinstance(ref, str):
                    try:
                        resolver.lookup(ref)
                    except Unresolvable:
                        raise SchemaError(
                            f"{keyword} {ref!r} does not resolve inside the schema; "
                            "the console never fetches remote or external references"
                        ) from None
            patterns = contents.get("patternProperties")
            for pattern in [contents.get("pattern"), *(patterns if isinstance(patterns, dict) else ())]:
                if isinstance(pattern, str):
                    _check_pattern(pattern)
        stack.extend((resolver.in_subresource(sub), sub) for sub in resource.subresources())


@dataclass(frozen=True)
class _Key:
    digest: str
    encoded: bytes = field(compare=False, hash=False)


@lru_cache(maxsize=CACHE_SIZE)
def _compile(key: _Key):
    schema = json.loads(key.encoded)  # a private copy: the caller may change theirs after we cache
    declared = schema.get("$schema", DEFAULT_DIALECT)
    dialect = dialects.DIALECTS.get(dialects.dialect_key(declared)) if isinstance(declared, str) else None
    if dialect is None:
        raise SchemaError(
            f"$schema {declared!r} is not a JSON Schema draft the console supports "
            "(2020-12, 2019-09, draft-07, draft-06, draft-04)"
        )
    meta, validator, specification = dialect
    error = best_match(meta.iter_errors(schema))
    if error is not None:
        where = _location("", error.absolute_path)
        raise SchemaError(_clip(f"{where}: {error.message}" if where else error.message))
    root = specification.create_resource(schema)
    # Crawled once here, so that no lookup during validation crawls the whole schema again.
    registry = Registry(retrieve=_refuse).with_resource(root.id() or "", root).crawl()
    _check_subschemas(METASCHEMAS.combine(registry), root)
    return validator(schema, registry=registry)


# Digests and validators by a key that their callers vouch stands for the schema's content (validate's `known`).
_known: dict = {}


def _compiled(schema, known=None) -> tuple[str, object]:
    """The schema's digest and its compiled validator; by `known` when it was given before."""
    if known is not None and (found := _known.get(known)) is not None:
        return found
    if not isinstance(schema, dict):
        raise SchemaError("a schema must be a JSON object")
    try:
        encoded = _encoded(schema, MAX_SCHEMA_BYTES)
    except ValueError as exc:
        raise SchemaError(f"the schema {exc}") from None
    key = _Key(hashlib.sha256(encoded).hexdigest(), encoded)
    compiled = key.digest, _compile(key)
    if known is not None:
        if len(_known) >= CACHE_SIZE:
            _known.clear()
        _known[known] = compiled
    return compiled


def check_schema(schema) -> None:
    """Raise SchemaError with a readable reason unless the console can validate against ``schema``."""
    _compiled(schema)


class NotQuick(Exception):
    """A validation given a short budget (validate's `quick`) did not finish within it."""


# Schemas whose validation once ran past a quick budget, by digest: they are not tried quickly again.
_costly: set[str] = set()


def validate(
    schema, instance, *, where: str = "arguments", quick: float | None = None, known=None, encoded: bytes | None = None
) -> list[str]:
    """Why ``instance`` does not conform to ``schema``, as messages a model can act on; empty when it does.

    Each message starts with the place in the instance, rooted at ``where``
    (``arguments.count: 'x' is not of type 'integer'``). Raises SchemaError
    when the schema itself is unusable. With `quick`, a budget of seconds, raises NotQuick
    when the validation runs past it (or ran past one before): for an event loop, which
    then validates in a thread with the whole MAX_SECONDS. `known`, a key that stands for the schema's content
    wherever it is given (a tool definition's digest and the schema's place in it), finds the schema's validator
    without encoding and hashing the schema again, as every call to a tool would. `encoded`, the instance's
    canonical JSON when the caller has it, spares encoding it again for its size.
    """
    digest, validator = _compiled(schema, known)
    if quick is not None and digest in _costly:
        raise NotQuick
    try:
        _encoded(instance, MAX_INSTANCE_BYTES, encoded)
    except ValueError as exc:
        return [f"{where}: the value {exc}"]
    messages = []
    token = dialects.deadline.set(time.monotonic() + (MAX_SECONDS if quick is None else quick))
    try:
        for error in validator.iter_errors(instance):
            if len(messages) == MAX_MESSAGES:
                messages.append(f"{where}: further errors not shown")
                break
            messages.append(_clip(f"{_location(where, error.absolute_path)}: {error.message}"))
    except dialects.TooCostly:
        if quick is not None:
            if len(_costly) >= CACHE_SIZE:
                _costly.clear()
            _costly.add(digest)
            raise NotQuick from None
        messages.append(f"{where}: validation stopped after {MAX_SECONDS:g} seconds; the schema costs too much")
    except RecursionError:
        messages.append(f"{where}: the schema refers to itself too deeply to check this value")
    except Unresolvable as exc:
        messages.append(_clip(f"{where}: a schema reference does not resolve: {exc}"))
    finally:
        dialects.deadline.reset(token)
    return messages
