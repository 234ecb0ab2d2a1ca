"""The pure checks: which requestedSchemas the spec allows, answers against them, URL mode, defaults."""

import pytest

from approvals.protocol.elicitation import content_problems, defaults, schema_problems
from approvals.protocol.elicitation_requests import answer_problems, request_problems, url_domain, url_problems

EVERY_FIELD = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name", "description": "Full name", "minLength": 2, "maxLength": 20},
        "email": {"type": "string", "format": "email"},
        "homepage": {"type": "string", "format": "uri"},
        "born": {"type": "string", "format": "date"},
        "meeting": {"type": "string", "format": "date-time"},
        "age": {"type": "integer", "minimum": 18, "maximum": 99, "default": 30},
        "score": {"type": "number", "minimum": 0, "maximum": 10, "default": 9.5},
        "agree": {"type": "boolean", "default": True},
        "color": {"type": "string", "enum": ["red", "green"], "default": "red"},
        "pet": {"type": "string", "enum": ["cat", "dog"], "enumNames": ["Cats", "Dogs"]},
        "hero": {"type": "string", "oneOf": [{"const": "h1", "title": "Superman"}, {"const": "h2", "title": "Batman"}]},
        "tools": {
            "type": "array",
            "items": {"type": "string", "enum": ["saw", "drill", "file"]},
            "minItems": 1,
            "maxItems": 2,
        },
        "fish": {
            "type": "array",
            "items": {"anyOf": [{"const": "f1", "title": "Tuna"}, {"const": "f2", "title": "Trout"}]},
            "default": ["f1"],
        },
    },
    "required": ["name", "email"],
}
GOOD = {
    "name": "Ada",
    "email": "ada@example.com",
    "homepage": "https://ada.example",
    "born": "1815-12-10",
    "meeting": "2030-01-02T09:30:00+01:00",
    "age": 36,
    "score": 7.5,
    "agree": False,
    "color": "green",
    "pet": "dog",
    "hero": "h2",
    "tools": ["saw", "file"],
    "fish": ["f2"],
}


def test_it_accepts_every_shape_the_spec_allows():
    assert schema_problems(EVERY_FIELD) == []
    assert content_problems(EVERY_FIELD, GOOD) == []


@pytest.mark.parametrize(
    "schema, expected",
    [
        ({"type": "object", "properties": {"address": {"type": "object", "properties": {}}}}, "nested objects"),
        (
            {"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}}}},
            "'items.enum' must be",
        ),
        (
            {"type": "object", "properties": {"zip": {"type": "string", "pattern": "^[0-9]+$"}}},
            "'pattern' is not allowed",
        ),
        ({"type": "object", "properties": {"ip": {"type": "string", "format": "ipv4"}}}, "format 'ipv4'"),
        (
            {"type": "object", "properties": {"x": {"$ref": "#/$defs/x"}}, "$defs": {"x": {"type": "string"}}},
            "uses '$defs'",
        ),
        ({"type": "object", "properties": {"n": {"type": "integer", "minimum": "1"}}}, "'minimum' must be a number"),
        (
            {"type": "object", "properties": {"c": {"type": "string", "enum": ["a", "b"], "enumNames": ["A"]}}},
            "as many strings",
        ),
        ({"type": "object", "properties": {"c": {"type": "string", "oneOf": [{"const": "a"}]}}}, "{const, title}"),
        (
            {"type": "object", "properties": {"c": {"type": "string", "enum": ["a"], "default": "b"}}},
            "default 'b' does not fit",
        ),
        (
            {
                "type": "object",
                "properties": {
                    "m": {"type": "array", "items": {"type": "string", "enum": ["a"]}, "minItems": 3, "maxItems": 1}
                },
            },
            "'minItems' is greater than 'maxItems'",
        ),
        ({"type": "object", "properties": {}, "required": ["ghost"]}, "'ghost' is required but not a property"),
        ({"type": "array"}, "must have type 'object'"),
    ],
)
def test_it_refuses_what_lies_outside_the_subset_and_says_why(schema, expected):
    problems = schema_problems(schema)
    assert any(expected in problem for problem in problems), problems


@pytest.mark.parametrize(
    "field, value, expected",
    [
        ("name", "A", "at least 2 characters"),
        ("name", "A" * 21, "at most 20 characters"),
        ("name", 5, "must be a string"),
        ("email", "not-an-email", "not a valid email"),
        ("homepage", "no scheme here", "not a valid uri"),
        ("born", "1815-13-40", "not a valid date"),
        ("born", "10/12/1815", "not a valid date"),
        ("meeting", "2030-01-02T09:30:00", "not a valid date-time"),
        ("age", 17, "at least 18"),
        ("age", 100, "at most 99"),
        ("age", 36.5, "must be an integer"),
        ("age", True, "must be an integer"),
        ("score", "7", "must be a number"),
        ("score", 11, "at most 10"),
        ("agree", "yes", "true or false"),
        ("color", "blue", "one of red, green"),
        ("pet", "Dogs", "one of cat, dog"),
        ("hero", "Batman", "one of h1, h2"),
        ("tools", [], "at least 1 choices"),
        ("tools", ["saw", "drill", "file"], "at most 2 choices"),
        ("tools", ["hammer"], "'hammer' is none of saw, drill, file"),
        ("tools", ["saw", "saw"], "twice"),
        ("fish", "f1", "list of choices"),
    ],
)
def test_it_checks_each_field_type_of_an_answer(field, value, expected):
    problems = content_problems(EVERY_FIELD, {**GOOD, field: value})
    assert any(f"'{field}': " in p and expected in p for p in problems), problems


def test_it_requires_what_is_required_and_nothing_unasked():
    problems = content_problems(EVERY_FIELD, {"name": "Ada", "extra": 1})
    assert "'email' is required" in problems and "'extra' was not asked for" in problems
    assert content_problems(EVERY_FIELD, {"name": "Ada", "email": "a@b.example"}) == []


def test_it_counts_an_integral_float_as_an_integer_and_a_z_offset_as_a_time_zone():
    assert content_problems(EVERY_FIELD, {**GOOD, "age": 36.0, "meeting": "2030-01-02T09:30:00Z"}) == []


def test_it_extracts_the_defaults_of_a_schema():
    assert defaults(EVERY_FIELD) == {"age": 30, "score": 9.5, "agree": True, "color": "red", "fish": ["f1"]}


def test_it_checks_the_request_of_either_mode():
    assert request_problems({"message": "Hi", "requestedSchema": EVERY_FIELD}) == []
    assert (
        request_problems({"mode": "url", "message": "Sign in", "url": "https://auth.example/x", "elicitationId": "e1"})
        == []
    )
    assert request_problems({"mode": "telepathy", "message": "?"}) == ["mode 'telepathy' is neither 'form' nor 'url'"]
    assert "'message' must be a string" in request_problems({"requestedSchema": EVERY_FIELD})


@pytest.mark.parametrize(
    "url, expected",
    [
        ("javascript:alert(1)", "absolute https:// or http://"),
        ("/relative/path", "absolute https:// or http://"),
        ("https://bank.example@evil.example/login", "user name or password"),
        ("https://ok.example/a b", "spaces"),
        (42, "must be a string"),
    ],
)
def test_it_refuses_a_url_that_could_mislead_or_is_not_web(url, expected):
    assert any(expected in p for p in url_problems(url))


def test_it_sets_the_domain_apart_in_ascii_so_look_alikes_show():
    assert url_domain("https://Login.Example.com:8443/path?q=1") == "login.example.com"
    assert url_domain("https://аpple.com/") == "xn--pple-43d.com"


def test_it_checks_the_shape_of_an_answer():
    assert answer_problems({"action": "accept", "content": {"a": 1}}, form_mode=True) == []
    assert answer_problems({"action": "maybe"}, form_mode=True)
    assert answer_problems({"action": "decline", "content": {}}, form_mode=True)
    assert answer_problems({"action": "accept", "content": {}}, form_mode=False)
