"""The form built from a flat JSON Schema: every field kind the next issue's elicitation forms need."""

import pytest

from approvals.forms.schema import build_form, is_flat
from approvals.protocol.schemas import validate

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name", "description": "Who it is for.", "minLength": 2, "maxLength": 10},
        "email": {"type": "string", "format": "email"},
        "site": {"type": "string", "format": "uri"},
        "day": {"type": "string", "format": "date"},
        "at": {"type": "string", "format": "date-time"},
        "count": {"type": "integer", "minimum": 1, "maximum": 5, "default": 3},
        "price": {"type": "number", "minimum": 0},
        "notify": {"type": "boolean", "default": True},
        "urgent": {"type": "boolean"},
        "color": {"type": "string", "enum": ["r", "g"], "enumNames": ["Red", "Green"]},
        "size": {"type": "string", "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}]},
        "level": {"type": "integer", "enum": [1, 2]},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}, "minItems": 1, "maxItems": 2},
        "teams": {
            "type": "array",
            "items": {"anyOf": [{"const": "ops", "title": "Operations"}, {"const": "dev", "title": "Development"}]},
        },
    },
    "required": ["name", "color"],
}


def posted(**fields):
    return {f"arg-{name}": value for name, value in fields.items()}


def test_it_turns_typed_values_into_json_of_the_right_types():
    form = build_form(
        SCHEMA,
        data=posted(
            name="Ada",
            email="ada@example.com",
            site="https://example.com/x",
            day="2026-02-03",
            at="2026-02-03T04:05",
            count="4",
            price="2.0",
            notify="on",
            urgent="false",
            color="g",
            size="l",
            level="2",
            tags=["a", "c"],
            teams=["dev"],
        ),
    )
    assert form.is_valid(), form.errors
    arguments = form.to_arguments()
    assert arguments == {
        "name": "Ada",
        "email": "ada@example.com",
        "site": "https://example.com/x",
        "day": "2026-02-03",
        "at": "2026-02-03T04:05:00+00:00",
        "count": 4,
        "price": 2,
        "notify": True,
        "urgent": False,
        "color": "g",
        "size": "l",
        "level": 2,
        "tags": ["a", "c"],
        "teams": ["dev"],
    }
    assert validate(SCHEMA, arguments) == []


def test_it_leaves_out_optional_fields_left_empty():
    form = build_form(SCHEMA, data=posted(name="Ada", color="r", count="", urgent=""))
    assert form.is_valid(), form.errors
    assert form.to_arguments() == {"name": "Ada", "color": "r", "notify": False}


@pytest.mark.parametrize(
    "fields, field",
    [
        ({"name": "A", "color": "r"}, "name"),
        ({"name": "Ada"}, "color"),
        ({"name": "Ada", "color": "x"}, "color"),
        ({"name": "Ada", "color": "r", "count": "9"}, "count"),
        ({"name": "Ada", "color": "r", "email": "nope"}, "email"),
        ({"name": "Ada", "color": "r", "tags": ["a", "b", "c"]}, "tags"),
        ({"name": "Ada", "color": "r", "day": "3 Feb"}, "day"),
    ],
)
def test_it_refuses_what_the_schema_forbids(fields, field):
    form = build_form(SCHEMA, data=posted(**fields))
    assert not form.is_valid()
    assert field in form.errors


def test_it_labels_fields_from_titles_descriptions_and_choice_titles():
    form = build_form(SCHEMA)
    assert form.fields["name"].label == "Name" and form.fields["name"].help_text == "Who it is for."
    assert form.fields["email"].label == "email"
    assert dict(form.fields["color"].choices) == {"": "—", "r": "Red", "g": "Green"}
    assert dict(form.fields["size"].choices) == {"": "—", "s": "Small", "l": "Large"}
    assert dict(form.fields["teams"].choices) == {"ops": "Operations", "dev": "Development"}
    assert form.fields["name"].required and not form.fields["email"].required


def test_it_fills_from_the_arguments_and_else_from_defaults():
    form = build_form(SCHEMA, {"name": "Ada", "level": 2, "urgent": True, "tags": ["b"], "at": "2026-02-03T04:05:06Z"})
    html = str(form)
    assert 'value="Ada"' in html and 'value="3"' in html
    assert '<option value="2" selected>' in html and '<option value="true" selected>' in html
    assert form["tags"].value() == ["b"] and str(form["tags"]).count("checked") == 1
    assert 'value="2026-02-03T04:05:06"' in html


@pytest.mark.parametrize(
    "schema, arguments, flat",
    [
        (SCHEMA, {"name": "Ada"}, True),
        (SCHEMA, {"name": "Ada", "extra": 1}, False),
        ({"type": "object", "properties": {"address": {"type": "object"}}}, {}, False),
        ({"type": "object", "properties": {"n": {"type": ["string", "null"]}}}, {}, False),
        ({"type": "object", "properties": {"t": {"type": "string", "format": "ipv4"}}}, {}, False),
        ({"type": "object"}, {}, False),
        ({"type": "array"}, {}, False),
    ],
)
def test_it_knows_which_schemas_a_form_can_edit(schema, arguments, flat):
    assert is_flat(schema, arguments) is flat


def test_it_refuses_a_required_multiple_choice_left_empty_as_a_field_error():
    schema = {**SCHEMA, "required": ["name", "color", "tags"]}
    form = build_form(schema, data=posted(name="Ada", color="r"))
    assert not form.is_valid()
    assert form.errors["tags"] == ["This field is required."]
