"""Requests made from the OpenAPI document, and answers checked against it: no per-endpoint code, so an
endpoint added to the document is exercised by the same test, or fails it for want of a path value."""

import re
from datetime import UTC, datetime

from jsonschema import Draft202012Validator

# Values for string patterns the document uses; a new pattern fails the test until it has one here.
PATTERN_SAMPLES = {r"^[0-9a-f]{64}$": "0" * 64, r"^(\d{1,20})-(\d{1,20})$": "0-0"}


def resolved(doc: dict, schema: dict) -> dict:
    while "$ref" in schema:
        path = schema["$ref"].removeprefix("#/").split("/")
        schema = doc
        for part in path:
            schema = schema[part]
    return schema


def sample(doc: dict, schema: dict):
    """A value that fits `schema`: its default, first enum value, or a plain value of its type."""
    schema = resolved(doc, schema)
    if "default" in schema:
        return schema["default"]
    if "enum" in schema:
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        if key in schema:
            options = [s for s in schema[key] if resolved(doc, s).get("type") != "null"]
            return sample(doc, options[0]) if options else None
    kind = schema.get("type", "object")
    if kind == "string":
        if "pattern" in schema:
            assert schema["pattern"] in PATTERN_SAMPLES, f"no sample for the pattern {schema['pattern']}"
            return PATTERN_SAMPLES[schema["pattern"]]
        return datetime.now(UTC).isoformat() if schema.get("format") == "date-time" else "x"
    if kind in ("integer", "number"):
        return 1
    if kind == "boolean":
        return True
    if kind == "array":
        return [sample(doc, schema.get("items", {}))]
    properties = schema.get("properties", {})
    return {name: sample(doc, properties[name]) for name in schema.get("required", [])}


def operations(doc: dict):
    for path, methods in doc["paths"].items():
        for method, operation in methods.items():
            yield path, method.upper(), operation


def check_answer(doc: dict, operation: dict, status: int, content_type: str, body) -> str:
    """Why the answer does not fit what the document says of it, or ""."""
    documented = operation["responses"].get(str(status))
    if documented is None:
        return f"status {status} is not documented (documented: {sorted(operation['responses'])})"
    media = content_type.split(";")[0].strip()
    if media not in documented.get("content", {}):
        return f"{status} answered {media}, documented {sorted(documented.get('content', {}))}"
    if media != "application/json":
        return ""
    schema = {**documented["content"][media]["schema"], "components": doc["components"]}
    errors = [e.message for e in Draft202012Validator(schema).iter_errors(body)]
    return "; ".join(errors)


def filled_path(path: str, values: dict) -> str:
    def value(found):
        assert found.group(1) in values, f"no value for the path parameter {found.group(1)}: add one to the test"
        return str(values[found.group(1)])

    return re.sub(r"\{(\w+)\}", value, path)
