"""One property of elicitation's form subset: which shape it has, its choices, and whether a value fits it."""

import math
import re
from datetime import date, datetime

_EMAIL = re.compile(r"[^@\s]+@[^@\s]+")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_DATE_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})")


def property_kind(prop) -> str | None:
    """Which of the subset's shapes a property has: a key of KEYS, or None for none of them."""
    if not isinstance(prop, dict):
        return None
    declared = prop.get("type")
    if declared == "string":
        if "enum" in prop:
            return "enum"
        return "one_of" if "oneOf" in prop else "string"
    if declared == "array":
        return "multi"
    if declared in ("number", "integer", "boolean"):
        return declared
    return None


def options(prop) -> list[tuple[str, str]]:
    """(value, label) of each choice of a single or multi select; [] for any other property."""
    kind = property_kind(prop)
    source = prop.get("items") if kind == "multi" else prop
    if not isinstance(source, dict):
        return []
    values = source.get("enum")
    if isinstance(values, list):
        names = source.get("enumNames")
        labels = names if isinstance(names, list) and len(names) == len(values) else values
        return [(v, str(label)) for v, label in zip(values, labels, strict=True)]
    variants = source.get("oneOf" if kind == "one_of" else "anyOf")
    if isinstance(variants, list):
        return [(v.get("const"), str(v.get("title", v.get("const")))) for v in variants if isinstance(v, dict)]
    return []


def value_problems(prop: dict, value) -> list[str]:
    kind = property_kind(prop)
    if kind in ("string", "enum", "one_of"):
        if not isinstance(value, str):
            return ["must be a string"]
        if kind != "string":
            allowed = [v for v, _ in options(prop)]
            return [] if value in allowed else [f"must be one of {', '.join(allowed)}"]
        return _text_problems(prop, value)
    if kind == "boolean":
        return [] if isinstance(value, bool) else ["must be true or false"]
    if kind in ("number", "integer"):
        if not is_number(value) or (kind == "integer" and not is_integer(value)):
            return [f"must be {'an integer' if kind == 'integer' else 'a number'}"]
        return _bound_problems(prop, value)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return ["must be a list of choices"]
    allowed = [v for v, _ in options(prop)]
    problems = [f"{v!r} is none of {', '.join(allowed)}" for v in value if v not in allowed]
    if len(set(value)) != len(value):
        problems.append("lists a choice twice")
    if len(value) < prop.get("minItems", 0):
        problems.append(f"needs at least {prop['minItems']} choices")
    if "maxItems" in prop and len(value) > prop["maxItems"]:
        problems.append(f"takes at most {prop['maxItems']} choices")
    return problems


def _text_problems(prop: dict, value: str) -> list[str]:
    problems = []
    if len(value) < prop.get("minLength", 0):
        problems.append(f"needs at least {prop['minLength']} characters")
    if "maxLength" in prop and len(value) > prop["maxLength"]:
        problems.append(f"takes at most {prop['maxLength']} characters")
    fmt = prop.get("format")
    if fmt is not None and not FORMAT_CHECKS[fmt](value):
        problems.append(f"is not a valid {fmt}")
    return problems


def _bound_problems(prop: dict, value) -> list[str]:
    problems = []
    if "minimum" in prop and value < prop["minimum"]:
        problems.append(f"must be at least {prop['minimum']}")
    if "maximum" in prop and value > prop["maximum"]:
        problems.append(f"must be at most {prop['maximum']}")
    return problems


def is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def is_integer(value) -> bool:
    # JSON Schema counts 3.0 as an integer: the JSON number is the same.
    return is_number(value) and float(value).is_integer()


def _is_uri(value: str) -> bool:
    scheme, _, rest = value.partition(":")
    return bool(_SCHEME.fullmatch(scheme)) and bool(rest) and not any(c.isspace() for c in value)


def _is_date(value: str) -> bool:
    return _parses(value, _DATE, date.fromisoformat)


def _is_date_time(value: str) -> bool:
    return _parses(value, _DATE_TIME, lambda text: datetime.fromisoformat(text.upper().replace("Z", "+00:00")))


def _parses(value: str, shape: re.Pattern, parse) -> bool:
    if not shape.fullmatch(value):
        return False
    try:
        parse(value)
    except ValueError:
        return False
    return True


FORMAT_CHECKS = {"email": _EMAIL.fullmatch, "uri": _is_uri, "date": _is_date, "date-time": _is_date_time}
