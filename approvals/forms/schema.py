"""A Django form built from a flat JSON Schema: one field per property.

Flat means an object whose properties are strings, numbers, integers, booleans,
single choices (enum, or oneOf/anyOf of const with titles, or legacy enumNames)
and multiple choices (arrays of such enums): the shapes of MCP elicitation's
requestedSchema, and of most tools' arguments. Anything else is edited as JSON.

The form turns what a person types into JSON values of the right types; the
schema itself is checked again by the caller (protocol.schemas.validate), so the
form never has to understand every keyword, only never to produce a wrong type.
"""

import json
from datetime import date, datetime

from django import forms

STRING_FORMATS = {"email", "uri", "date", "date-time"}
TEXTAREA_AT = 120
OPTIONAL_BOOLEAN = [("", "—"), ("true", "Yes"), ("false", "No")]


def choice_options(schema) -> list[tuple[object, str]] | None:
    """(value, label) for a schema that allows one of a few constants, else None."""
    if not isinstance(schema, dict):
        return None
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        values = schema["enum"]
        names = schema.get("enumNames")
        labels = names if isinstance(names, list) and len(names) == len(values) else values
        options = list(zip(values, labels, strict=True))
    else:
        variants = schema.get("oneOf") or schema.get("anyOf")
        if not isinstance(variants, list) or not variants:
            return None
        if not all(isinstance(v, dict) and "const" in v for v in variants):
            return None
        options = [(v["const"], v.get("title", v["const"])) for v in variants]
    if not all(isinstance(value, (str, int, float, bool)) for value, _ in options):
        return None
    return [(value, str(label)) for value, label in options]


def kind_of(schema) -> str | None:
    """How a property is edited: 'choice', 'choices', 'string', 'number', 'integer', 'boolean', or None."""
    if not isinstance(schema, dict):
        return None
    declared = schema.get("type")
    if declared == "array":
        return "choices" if choice_options(schema.get("items")) else None
    if choice_options(schema) and declared in (None, "string", "number", "integer", "boolean"):
        return "choice"
    if declared == "string":
        fmt = schema.get("format")
        return "string" if fmt is None or fmt in STRING_FORMATS else None
    if declared in ("number", "integer", "boolean"):
        return declared
    return None


def is_flat(schema, arguments=None) -> bool:
    """Whether `build_form` can edit these arguments without losing any of them."""
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        return False
    properties = schema.get("properties")
    if not isinstance(properties, dict) or not properties:
        return False
    if not all(kind_of(sub) for sub in properties.values()):
        return False
    return set(arguments or {}) <= set(properties)


def choice_keys(options) -> dict[str, object]:
    """The HTML value of each option: the string itself when every value is a string, else its JSON."""
    plain = all(isinstance(value, str) for value, _ in options)
    return {value if plain else json.dumps(value): value for value, _ in options}


class SchemaForm(forms.Form):
    """Fields are added by build_form; `arguments()` gives the JSON object they describe."""

    def __init__(self, schema, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.schema = schema
        self.keys = {}
        required = schema.get("required") if isinstance(schema.get("required"), list) else []
        for name, sub in schema["properties"].items():
            self.fields[name] = self.field_for(name, sub, name in required)

    def field_for(self, name, schema, required):
        kind = kind_of(schema)
        common = {"label": str(schema.get("title") or name), "help_text": str(schema.get("description") or "")}
        if kind in ("choice", "choices"):
            options = choice_options(schema if kind == "choice" else schema["items"])
            self.keys[name] = choice_keys(options)
            choices = [(key, label) for key, (_, label) in zip(self.keys[name], options, strict=True)]
            if kind == "choices":
                field = forms.MultipleChoiceField(
                    choices=choices, required=required, widget=forms.CheckboxSelectMultiple, **common
                )
                field.min_items, field.max_items = schema.get("minItems"), schema.get("maxItems")
                return field
            # A required choice starts unchosen unless the schema names a default:
            # nobody accepts a value they never picked.
            empty = [] if required and "default" in schema else [("", "—")]
            return forms.ChoiceField(choices=empty + choices, required=required, **common)
        if kind == "boolean":
            if is_optional_boolean(self.schema, name):
                return forms.TypedChoiceField(
                    choices=OPTIONAL_BOOLEAN, coerce=lambda v: v == "true", empty_value=None, required=False, **common
                )
            return forms.BooleanField(required=False, **common)
        if kind in ("number", "integer"):
            bounds = {"min_value": schema.get("minimum"), "max_value": schema.get("maximum")}
            if kind == "integer":
                return forms.IntegerField(required=required, **bounds, **common)
            return forms.FloatField(required=required, **bounds, **common)
        return self.string_field(schema, required, common, self.initial.get(name))

    def string_field(self, schema, required, common, current):
        lengths = {"min_length": schema.get("minLength"), "max_length": schema.get("maxLength")}
        fmt = schema.get("format")
        if fmt == "email":
            return forms.EmailField(required=required, **lengths, **common)
        if fmt == "uri":
            return forms.URLField(required=required, assume_scheme="https", **lengths, **common)
        if fmt == "date":
            return forms.DateField(required=required, widget=forms.DateInput(attrs={"type": "date"}), **common)
        if fmt == "date-time":
            widget = forms.DateTimeInput(attrs={"type": "datetime-local", "step": "1"}, format="%Y-%m-%dT%H:%M:%S")
            return forms.DateTimeField(required=required, widget=widget, **common)
        current = current if isinstance(current, str) else ""
        long_text = max(lengths["max_length"] or 0, len(current)) > TEXTAREA_AT or "\n" in current
        widget = forms.Textarea(attrs={"rows": 4}) if long_text else None
        return forms.CharField(required=required, strip=False, widget=widget, **lengths, **common)

    def clean(self):
        cleaned = super().clean()
        for name, field in self.fields.items():
            picked = cleaned.get(name)
            # Nothing picked on an optional field leaves the property out, which minItems allows; a required one left
            # empty has its field's own error and no value.
            if isinstance(field, forms.MultipleChoiceField) and picked:
                if field.min_items is not None and len(picked) < field.min_items:
                    self.add_error(name, f"Choose at least {field.min_items}.")
                if field.max_items is not None and len(picked) > field.max_items:
                    self.add_error(name, f"Choose at most {field.max_items}.")
        return cleaned

    def to_arguments(self) -> dict:
        """The JSON object the valid form describes; optional fields left empty are left out."""
        result = {}
        for name, value in self.cleaned_data.items():
            if value in (None, "", []) and not self.fields[name].required:
                continue
            result[name] = self.json_value(name, value)
        return result

    def json_value(self, name, value):
        if name in self.keys:
            keys = self.keys[name]
            return [keys[v] for v in value] if isinstance(value, list) else keys[value]
        if isinstance(value, (date, datetime)):
            return value.isoformat()
        if isinstance(value, float) and value.is_integer() and kind_of(self.schema["properties"][name]) == "number":
            return int(value)
        return value


def is_optional_boolean(schema, name) -> bool:
    """An optional boolean without a default may be left unset, which a checkbox cannot say."""
    required = schema.get("required") if isinstance(schema.get("required"), list) else []
    return name not in required and "default" not in schema["properties"][name]


def initial_value(schema, name, value):
    sub = schema["properties"][name]
    kind = kind_of(sub)
    if kind in ("choice", "choices"):
        options = choice_options(sub if kind == "choice" else sub["items"])
        by_json = {json.dumps(v): key for key, v in choice_keys(options).items()}
        picked = [by_json.get(json.dumps(v)) for v in (value if isinstance(value, list) else [value])]
        return picked if kind == "choices" else picked[0]
    if kind == "boolean" and is_optional_boolean(schema, name):
        return "true" if value else "false"
    if kind == "string" and sub.get("format") in ("date", "date-time") and isinstance(value, str):
        parse = date.fromisoformat if sub["format"] == "date" else datetime.fromisoformat
        try:
            return parse(value)
        except ValueError:
            return value
    return value


def initial_values(schema, arguments: dict) -> dict:
    """Form initial data from JSON values: the arguments given, else each property's default."""
    initial = {}
    for name, sub in schema["properties"].items():
        value = arguments[name] if name in arguments else sub.get("default")
        if value is not None:
            initial[name] = initial_value(schema, name, value)
    return initial


def build_form(schema, arguments=None, data=None, prefix="arg") -> SchemaForm:
    """The form for a flat schema, filled from `arguments` (and defaults) or bound to posted `data`."""
    return SchemaForm(schema, data=data, initial=initial_values(schema, arguments or {}), prefix=prefix)
