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
import math
import re
import time
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import lru_cache

import jsonschema._keywords
import jsonschema._legacy_keywords
import jsonschema._utils
import referencing.jsonschema
from jsonschema import validators
from jsonschema.exceptions import ValidationError, best_match
from jsonschema_specifications import REGISTRY as METASCHEMAS
from referencing import Registry
from referencing.exceptions import NoSuchResource, Unresolvable

from approvals.protocol import patterns
from approvals.protocol.canonical import canonical_json

MAX_SCHEMA_BYTES = 256 * 1024
MAX_INSTANCE_BYTES = 1024 * 1024
MAX_DEPTH = 48
MAX_PATTERN_CHARS = 512
MAX_MATCHED_CHARS = 4096
MAX_SECONDS = 2.0
MAX_MESSAGES = 20
MESSAGE_CHARS = 300
CACHE_SIZE = 256

DEFAULT_DIALECT = "https://json-schema.org/draft/2020-12/schema"


class SchemaError(ValueError):
    """A schema the console will not use; ``reason`` says why, for an admin to read."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class _TooCostly(Exception):
    pass


_deadline: ContextVar[float] = ContextVar("schema_validation_deadline")


def _metered(keyword):
    def metered(validator, value, instance, schema):
        if time.monotonic() > _deadline.get():
            raise _TooCostly
        return keyword(validator, value, instance, schema)

    return metered


def _pattern(validator, pattern, instance, schema):
    if not validator.is_type(instance, "string"):
        return
    if len(instance) > MAX_MATCHED_CHARS:
        yield ValidationError(
            f"is {len(instance)} characters long; the console matches at most {MAX_MATCHED_CHARS} against a pattern"
        )
    elif not patterns.search(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


class _LinearTimeRe:
    """What jsonschema's keyword modules call ``re``. They match ``patternProperties``
    with ``re.search`` (in patternProperties itself, and where unevaluatedProperties
    works out which properties other keywords covered), and offer no other way in."""

    @staticmethod
    def search(pattern, text):
        if time.monotonic() > _deadline.get(math.inf):
            raise _TooCostly
        return patterns.compiled(pattern).search(text)


for _module in (jsonschema._keywords, jsonschema._legacy_keywords, jsonschema._utils):
    _module.re = _LinearTimeRe


def _additional_properties(validator, additional, instance, schema):
    # jsonschema's own joins every patternProperties key into one pattern, which RE2 may find
    # too large though it compiles each: here each is matched on its own.
    if not validator.is_type(instance, "object"):
        return
    named, keys = schema.get("properties", {}), schema.get("patternProperties", {})
    extras = [
        name for name in instance if name not in named and not any(_LinearTimeRe.search(key, name) for key in keys)
    ]
    if validator.is_type(additional, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], additional, path=extra)
    elif not additional and extras:
        listed = ", ".join(repr(extra) for extra in sorted(extras))
        yield ValidationError(
            f"Additional properties are not allowed ({listed} {'was' if len(extras) == 1 else 'were'} unexpected)"
        )


def _equality_key(value):
    # JSON Schema equality: 1 equals 1.0, true does not equal 1, object key order does not matter.
    if isinstance(value, bool):
        return (bool, value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return (dict, frozenset((key, _equality_key(item)) for key, item in value.items()))
    if isinstance(value, list):
        return (list, tuple(_equality_key(item) for item in value))
    return value


def _unique_items(validator, unique, instance, schema):
    if not unique or not validator.is_type(instance, "array"):
        return
    seen = set()
    for item in instance:
        key = _equality_key(item)
        if key in seen:
            yield ValidationError("has repeated items, but they must be unique")
            return
        seen.add(key)


def _dialect(cls):
    uri = cls.META_SCHEMA.get("$id") or cls.META_SCHEMA["id"]
    keywords = {
        **cls.VALIDATORS,
        "pattern": _pattern,
        "additionalProperties": _additional_properties,
        "uniqueItems": _unique_items,
    }
    return _dialect_key(uri), (
        # No format checker: the metaschema's only format it could check is "regex", with Python's re;
        # patterns are judged by the engine that matches them, with its reason (_check_pattern).
        cls(cls.META_SCHEMA),
        validators.extend(cls, {name: _metered(fn) for name, fn in keywords.items()}),
        referencing.jsonschema.specification_with(uri),
    )


def _dialect_key(uri: str) -> str:
    return uri.split("://", 1)[-1].rstrip("#")


# Dialect key -> (metaschema validator, metered validator class, referencing specification).
_DIALECTS = dict(_dialect(getattr(validators, f"Draft{name}Validator")) for name in ("202012", "201909", "7", "6", "4"))


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


def _encoded(value, limit: int) -> bytes:
    """Canonical JSON of ``value`` within the bounds; ValueError says how it is out of them."""
    problem = _shape_problem(value)
    if problem is not None:
        raise ValueError(problem)
    try:
        encoded = canonical_json(value)
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
    dialect = _DIALECTS.get(_dialect_key(declared)) if isinstance(declared, str) else None
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


def _compiled(schema):
    if not isinstance(schema, dict):
        raise SchemaError("a schema must be a JSON object")
    try:
        encoded = _encoded(schema, MAX_SCHEMA_BYTES)
    except ValueError as exc:
        raise SchemaError(f"the schema {exc}") from None
    return _compile(_Key(hashlib.sha256(encoded).hexdigest(), encoded))


def check_schema(schema) -> None:
    """Raise SchemaError with a readable reason unless the console can validate against ``schema``."""
    _compiled(schema)


def validate(schema, instance, *, where: str = "arguments") -> list[str]:
    """Why ``instance`` does not conform to ``schema``, as messages a model can act on; empty when it does.

    Each message starts with the place in the instance, rooted at ``where``
    (``arguments.count: 'x' is not of type 'integer'``). Raises SchemaError
    when the schema itself is unusable.
    """
    validator = _compiled(schema)
    try:
        _encoded(instance, MAX_INSTANCE_BYTES)
    except ValueError as exc:
        return [f"{where}: the value {exc}"]
    messages = []
    token = _deadline.set(time.monotonic() + MAX_SECONDS)
    try:
        for error in validator.iter_errors(instance):
            if len(messages) == MAX_MESSAGES:
                messages.append(f"{where}: further errors not shown")
                break
            messages.append(_clip(f"{_location(where, error.absolute_path)}: {error.message}"))
    except _TooCostly:
        messages.append(f"{where}: validation stopped after {MAX_SECONDS:g} seconds; the schema costs too much")
    except RecursionError:
        messages.append(f"{where}: the schema refers to itself too deeply to check this value")
    except Unresolvable as exc:
        messages.append(_clip(f"{where}: a schema reference does not resolve: {exc}"))
    finally:
        _deadline.reset(token)
    return messages
