"""The JSON Schema drafts the console validates with, each keyword metered against one validation's deadline.

jsonschema's own ``pattern``, ``additionalProperties`` and ``uniqueItems`` are replaced: patterns
are matched by RE2 in linear time (approvals.protocol.patterns), never by Python's backtracking
``re``, and ``uniqueItems`` is checked by hashing rather than pairwise comparison.
"""

import math
import time
from contextvars import ContextVar

import jsonschema._keywords
import jsonschema._legacy_keywords
import jsonschema._utils
import referencing.jsonschema
from jsonschema import validators
from jsonschema.exceptions import ValidationError

from approvals.protocol import patterns

MAX_MATCHED_CHARS = 4096


class TooCostly(Exception):
    pass


deadline: ContextVar[float] = ContextVar("schema_validation_deadline")


def _metered(keyword):
    def metered(validator, value, instance, schema):
        if time.monotonic() > deadline.get():
            raise TooCostly
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
        if time.monotonic() > deadline.get(math.inf):
            raise TooCostly
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
    return dialect_key(uri), (
        # No format checker: the metaschema's only format it could check is "regex", with Python's re;
        # patterns are judged by the engine that matches them, with its reason (_check_pattern).
        cls(cls.META_SCHEMA),
        validators.extend(cls, {name: _metered(fn) for name, fn in keywords.items()}),
        referencing.jsonschema.specification_with(uri),
    )


def dialect_key(uri: str) -> str:
    return uri.split("://", 1)[-1].rstrip("#")


# Dialect key -> (metaschema validator, metered validator class, referencing specification).
DIALECTS = dict(_dialect(getattr(validators, f"Draft{name}Validator")) for name in ("202012", "201909", "7", "6", "4"))
