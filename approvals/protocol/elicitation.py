"""Elicitation as the spec allows it: the requestedSchema subset, and answers checked against it.

Form mode asks for a flat object whose properties are each one of:

- string: ``minLength``, ``maxLength``, ``format`` (email, uri, date, date-time)
- number or integer: ``minimum``, ``maximum``
- boolean
- single select: ``{type: string, enum}`` (``enumNames`` labels it, legacy) or
  ``{type: string, oneOf: [{const, title}]}``
- multi select: ``{type: array, items: {type: string, enum}}`` or
  ``items: {anyOf: [{const, title}]}``, with ``minItems``, ``maxItems``

and every property may carry ``title``, ``description`` and a ``default`` of its
own type. Anything else (nesting, references, patterns, unknown formats or
keywords) is outside the subset: the console refuses such a request rather than
guess at it, and says why.
"""

from approvals.protocol.elicitation_values import is_integer, is_number, property_kind, value_problems

FORMATS = ("email", "uri", "date", "date-time")
COMMON_KEYS = {"type", "title", "description", "default"}
KEYS = {
    "string": COMMON_KEYS | {"minLength", "maxLength", "format"},
    "number": COMMON_KEYS | {"minimum", "maximum"},
    "integer": COMMON_KEYS | {"minimum", "maximum"},
    "boolean": COMMON_KEYS,
    "enum": COMMON_KEYS | {"enum", "enumNames"},
    "one_of": COMMON_KEYS | {"oneOf"},
    "multi": COMMON_KEYS | {"items", "minItems", "maxItems"},
}
TOP_KEYS = {"$schema", "type", "properties", "required", "title", "description", "additionalProperties"}


def schema_problems(schema) -> list[str]:
    """Why a requestedSchema is outside the allowed subset; empty when it is inside."""
    if not isinstance(schema, dict):
        return ["the requested schema is not a JSON object"]
    problems = []
    if schema.get("type") != "object":
        problems.append("the requested schema must have type 'object'")
    problems += [f"the schema uses '{key}', which elicitation does not allow" for key in sorted(set(schema) - TOP_KEYS)]
    properties = schema.get("properties", {})
    if not isinstance(properties, dict):
        return problems + ["'properties' must be an object"]
    for name, prop in properties.items():
        problems += [f"property '{name}': {problem}" for problem in property_problems(prop)]
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(name, str) for name in required):
        problems.append("'required' must be a list of property names")
    else:
        problems += [f"'{name}' is required but not a property" for name in required if name not in properties]
    return problems


def property_problems(prop) -> list[str]:
    kind = property_kind(prop)
    if kind is None:
        shown = prop.get("type") if isinstance(prop, dict) else type(prop).__name__
        return [
            f"its type {shown!r} is none of string, number, integer, boolean, or an array of choices; "
            "nested objects and free lists cannot be asked for"
        ]
    problems = [
        f"'{key}' is not allowed on a {kind.replace('_', ' ')} property" for key in sorted(set(prop) - KEYS[kind])
    ]
    for key in ("title", "description"):
        if key in prop and not isinstance(prop[key], str):
            problems.append(f"'{key}' must be a string")
    problems += KIND_CHECKS[kind](prop)
    if "default" in prop and not problems:
        problems += [
            f"its default {prop['default']!r} does not fit: {p}" for p in value_problems(prop, prop["default"])
        ]
    return problems


def _string_problems(prop) -> list[str]:
    problems = _count_problems(prop, "minLength", "maxLength")
    if "format" in prop and prop["format"] not in FORMATS:
        problems.append(f"format {prop['format']!r} is none of {', '.join(FORMATS)}")
    return problems


def _number_problems(prop) -> list[str]:
    return [f"'{key}' must be a number" for key in ("minimum", "maximum") if key in prop and not is_number(prop[key])]


def _enum_problems(prop) -> list[str]:
    values, names = prop.get("enum"), prop.get("enumNames")
    problems = _choice_list_problems(values, "enum")
    if names is not None and (
        not isinstance(names, list)
        or not all(isinstance(n, str) for n in names)
        or not isinstance(values, list)
        or len(names) != len(values)
    ):
        problems.append("'enumNames' must be as many strings as 'enum' has values")
    return problems


def _one_of_problems(prop) -> list[str]:
    return _titled_problems(prop.get("oneOf"), "oneOf")


def _multi_problems(prop) -> list[str]:
    items = prop.get("items")
    if not isinstance(items, dict):
        return ["'items' must be an object of choices"]
    if "anyOf" in items:
        problems = [f"'items' may hold only 'anyOf', not {key!r}" for key in sorted(set(items) - {"anyOf", "type"})]
        if items.get("type", "string") != "string":
            problems.append("'items' must be of type 'string'")
        problems += _titled_problems(items["anyOf"], "items.anyOf")
    else:
        problems = [
            f"'items' may hold only 'type' and 'enum', not {key!r}" for key in sorted(set(items) - {"type", "enum"})
        ]
        if items.get("type") != "string":
            problems.append("'items' must be of type 'string'")
        problems += _choice_list_problems(items.get("enum"), "items.enum")
    return problems + _count_problems(prop, "minItems", "maxItems")


def _choice_list_problems(values, where) -> list[str]:
    if not isinstance(values, list) or not values or not all(isinstance(v, str) for v in values):
        return [f"'{where}' must be a non-empty list of strings"]
    if len(set(values)) != len(values):
        return [f"'{where}' lists a value twice"]
    return []


def _titled_problems(variants, where) -> list[str]:
    shape_ok = (
        isinstance(variants, list)
        and variants
        and all(
            isinstance(v, dict)
            and set(v) == {"const", "title"}
            and isinstance(v["const"], str)
            and isinstance(v["title"], str)
            for v in variants
        )
    )
    if not shape_ok:
        return [f"'{where}' must be a non-empty list of {{const, title}} strings"]
    return _choice_list_problems([v["const"] for v in variants], where)


def _count_problems(prop, low, high) -> list[str]:
    problems = [
        f"'{key}' must be a non-negative integer"
        for key in (low, high)
        if key in prop and not (is_integer(prop[key]) and prop[key] >= 0)
    ]
    if not problems and low in prop and high in prop and prop[low] > prop[high]:
        problems.append(f"'{low}' is greater than '{high}'")
    return problems


KIND_CHECKS = {
    "string": _string_problems,
    "number": _number_problems,
    "integer": _number_problems,
    "boolean": lambda prop: [],
    "enum": _enum_problems,
    "one_of": _one_of_problems,
    "multi": _multi_problems,
}


def content_problems(schema: dict, content) -> list[str]:
    """Why an accepted form's content does not answer `schema` (which must be inside the subset)."""
    if not isinstance(content, dict):
        return ["the answer must be a JSON object"]
    properties = schema.get("properties", {})
    problems = [f"'{name}' was not asked for" for name in content if name not in properties]
    problems += [f"'{name}' is required" for name in schema.get("required", []) if name not in content]
    for name, value in content.items():
        if name in properties:
            problems += [f"'{name}': {p}" for p in value_problems(properties[name], value)]
    return problems


def defaults(schema: dict) -> dict:
    """Each property's default: what a form shows before anyone types, and what accepting it unchanged answers."""
    return {name: prop["default"] for name, prop in schema.get("properties", {}).items() if "default" in prop}
