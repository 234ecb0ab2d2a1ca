import socket
import time
import urllib.request

import pytest

from approvals.protocol import schemas
from approvals.protocol.schemas import NotQuick, SchemaError, check_schema, validate
from tests.protocol.schema_cases import DRAFT_04, DRAFT_07, reason_for


def test_it_reads_a_schema_without_dollar_schema_as_2020_12():
    schema = {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "integer"}]}
    assert validate(schema, [1, "two"]) == ["arguments[1]: 'two' is not of type 'integer'"]


def test_it_validates_a_draft_07_schema_with_draft_07_semantics():
    schema = {
        "$schema": DRAFT_07,
        "type": "object",
        "properties": {"pair": {"type": "array", "items": [{"type": "integer"}, {"type": "string"}]}},
        "dependencies": {"pair": ["label"]},
    }
    check_schema(schema)
    assert validate(schema, {"pair": [1, "x"], "label": "ok"}) == []
    assert validate(schema, {"pair": ["x", 1], "label": "ok"}) == [
        "arguments.pair[0]: 'x' is not of type 'integer'",
        "arguments.pair[1]: 1 is not of type 'string'",
    ]
    assert validate(schema, {"pair": [1, "x"]}) == ["arguments: 'label' is a dependency of 'pair'"]


def test_it_rejects_the_same_tuple_items_under_2020_12_where_they_are_invalid():
    schema = {"type": "object", "properties": {"pair": {"type": "array", "items": [{"type": "integer"}]}}}
    assert "properties.pair.items" in reason_for(schema)


def test_it_validates_a_draft_04_schema_with_its_boolean_exclusive_minimum():
    schema = {
        "$schema": DRAFT_04,
        "type": "object",
        "properties": {"n": {"type": "integer", "minimum": 1, "exclusiveMinimum": True}},
    }
    assert validate(schema, {"n": 2}) == []
    assert validate(schema, {"n": 1}) == ["arguments.n: 1 is less than or equal to the minimum of 1"]


def test_it_accepts_2019_09_by_its_https_address_and_draft_07_by_https_too():
    check_schema({"$schema": "https://json-schema.org/draft/2019-09/schema", "type": "object"})
    check_schema({"$schema": "https://json-schema.org/draft-07/schema", "type": "object"})


def test_it_rejects_an_unknown_dollar_schema_and_says_which():
    assert "'https://example.com/my-dialect' is not a JSON Schema draft" in reason_for(
        {"$schema": "https://example.com/my-dialect", "type": "object"}
    )


def test_it_rejects_a_type_that_does_not_exist_naming_where():
    reason = reason_for({"type": "object", "properties": {"a": {"type": "nosuchtype"}}})
    assert reason.startswith("properties.a.type: 'nosuchtype'")


def test_it_rejects_a_minimum_that_is_not_a_number_naming_where():
    assert reason_for({"type": "object", "properties": {"n": {"minimum": "x"}}}) == (
        "properties.n.minimum: 'x' is not of type 'number'"
    )


def test_it_rejects_a_pattern_that_is_not_a_regular_expression():
    assert "pattern" in reason_for({"type": "string", "pattern": "(["})


@pytest.fixture
def network_attempts(monkeypatch):
    attempts = []

    def refuse(*args, **kwargs):
        attempts.append(args)
        raise AssertionError("the network was touched")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(urllib.request, "urlopen", refuse)
    return attempts


def test_it_refuses_a_network_ref_without_opening_a_connection(network_attempts):
    schema = {"type": "object", "properties": {"a": {"$ref": "https://example.com/definitions.json#/a"}}}
    assert "never fetches remote" in reason_for(schema)
    with pytest.raises(SchemaError):
        validate(schema, {"a": 1})
    assert network_attempts == []


def test_it_refuses_a_relative_ref_to_another_document_under_a_network_base(network_attempts):
    schema = {"$id": "https://example.com/tool.json", "type": "object", "properties": {"a": {"$ref": "other.json"}}}
    assert "'other.json' does not resolve inside the schema" in reason_for(schema)
    assert network_attempts == []


def test_it_refuses_a_ref_to_a_definition_that_is_not_there():
    assert "'#/$defs/missing'" in reason_for({"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}})


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"a": {"$ref": "#/$defs/s"}}, "$defs": {"s": {"type": "string"}}},
        {"type": "object", "properties": {"a": {"$ref": "#s"}}, "$defs": {"s": {"$anchor": "s", "type": "string"}}},
        {
            "$id": "https://example.com/root.json",
            "type": "object",
            "properties": {"a": {"$ref": "item.json"}},
            "$defs": {"s": {"$id": "item.json", "type": "string"}},
        },
    ],
)
def test_it_follows_refs_that_stay_inside_the_document(schema, network_attempts):
    assert validate(schema, {"a": 1}) == ["arguments.a: 1 is not of type 'string'"]
    assert network_attempts == []


def test_it_rejects_a_schema_larger_than_the_limit():
    schema = {
        "type": "object",
        "properties": {f"p{i}": {"type": "string", "description": "x" * 100} for i in range(3000)},
    }
    assert "bytes of JSON, more than the 262144" in reason_for(schema)


def test_it_rejects_a_schema_nested_deeper_than_the_limit():
    schema = {"type": "string"}
    for _ in range(schemas.MAX_DEPTH):
        schema = {"type": "object", "properties": {"x": schema}}
    assert "nested more than" in reason_for(schema)


def test_it_accepts_a_schema_nested_just_within_the_limit():
    schema = {"type": "string"}
    for _ in range(schemas.MAX_DEPTH // 2 - 1):
        schema = {"type": "object", "properties": {"x": schema}}
    check_schema(schema)


def test_it_stops_a_validation_that_would_take_exponentially_many_steps(monkeypatch):
    monkeypatch.setattr(schemas, "MAX_SECONDS", 0.2)
    ladder = {f"a{i}": {"anyOf": [{"$ref": f"#/$defs/a{i + 1}"}, {"$ref": f"#/$defs/a{i + 1}"}]} for i in range(40)}
    schema = {"$defs": {**ladder, "a40": {"type": "string"}}, "$ref": "#/$defs/a0"}
    started = time.monotonic()
    assert validate(schema, 1) == ["arguments: validation stopped after 0.2 seconds; the schema costs too much"]
    assert time.monotonic() - started < 5


def test_it_reports_a_schema_that_refers_to_itself_endlessly_instead_of_crashing():
    schema = {"$defs": {"loop": {"$ref": "#/$defs/loop"}}, "$ref": "#/$defs/loop"}
    assert validate(schema, 1) == ["arguments: the schema refers to itself too deeply to check this value"]


def test_it_compares_unique_items_as_json_values():
    schema = {"type": "array", "uniqueItems": True}
    assert validate(schema, [1, 1.0]) == ["arguments: has repeated items, but they must be unique"]
    assert validate(schema, [{"a": 1, "b": [2]}, {"b": [2.0], "a": 1}]) != []
    assert validate(schema, [True, 1, [False], [0], {"a": 1}, {"a": True}]) == []


def test_it_says_where_and_what_for_each_problem():
    schema = {
        "type": "object",
        "properties": {
            "count": {"type": "integer"},
            "items": {"type": "array", "items": {"type": "object", "properties": {"id": {"type": "string"}}}},
            "odd key": {"type": "boolean"},
        },
        "required": ["name"],
    }
    assert validate(schema, {"count": "x", "items": [{"id": "a"}, {"id": 3}], "odd key": 1}) == [
        "arguments.count: 'x' is not of type 'integer'",
        "arguments.items[1].id: 3 is not of type 'string'",
        "arguments[\"odd key\"]: 1 is not of type 'boolean'",
        "arguments: 'name' is a required property",
    ]


def test_it_roots_messages_where_the_caller_says():
    assert validate({"type": "object", "required": ["t"]}, {}, where="structuredContent") == [
        "structuredContent: 't' is a required property"
    ]


def test_it_caps_the_number_of_messages():
    schema = {"type": "object", "properties": {f"p{i}": {"type": "integer"} for i in range(50)}}
    messages = validate(schema, {f"p{i}": "x" for i in range(50)})
    assert len(messages) == schemas.MAX_MESSAGES + 1
    assert messages[-1] == "arguments: further errors not shown"


def test_it_clips_a_message_that_would_quote_a_long_value():
    [message] = validate({"type": "string", "maxLength": 3}, "x" * 10_000)
    assert len(message) == schemas.MESSAGE_CHARS and message.endswith("…")


def test_it_refuses_an_instance_larger_than_the_limit_without_validating_it():
    [message] = validate({"type": "array"}, ["x" * 1000] * 2000)
    assert message.startswith("arguments: the value is ") and "more than the 1048576" in message


def test_it_refuses_an_instance_nested_deeper_than_the_limit():
    value = []
    for _ in range(schemas.MAX_DEPTH + 1):
        value = [value]
    assert validate({}, value) == [f"arguments: the value is nested more than {schemas.MAX_DEPTH} levels deep"]


def test_it_shares_one_compiled_validator_between_equal_schemas_whatever_their_key_order():
    schemas._compile.cache_clear()
    validate({"type": "object", "required": ["a"], "properties": {"a": {"type": "string"}}}, {"a": "x"})
    validate({"properties": {"a": {"type": "string"}}, "required": ["a"], "type": "object"}, {"a": "x"})
    info = schemas._compile.cache_info()
    assert (info.misses, info.hits, info.maxsize) == (1, 1, schemas.CACHE_SIZE)


def test_it_never_validates_with_a_stale_validator_after_the_caller_changes_the_schema():
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    assert validate(schema, {"a": 1}) != []
    schema["properties"]["a"]["type"] = "integer"
    assert validate(schema, {"a": 1}) == []


def test_it_validates_within_a_quick_budget_as_with_the_whole_one():
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}

    assert validate(schema, {"n": "x"}, quick=1.0) == validate(schema, {"n": "x"})
    assert validate(schema, {"n": 1}, quick=1.0) == []


def test_it_gives_up_a_quick_validation_past_its_budget_and_never_tries_that_schema_quickly_again():
    schema = {"type": "object", "properties": {"slow": {"type": "string"}}, "title": "quick budget"}
    with pytest.raises(NotQuick):
        validate(schema, {"slow": "x"}, quick=-1.0)

    with pytest.raises(NotQuick):
        validate(schema, {"slow": "x"}, quick=10.0)
    assert validate(schema, {"slow": 1}) == ["arguments.slow: 1 is not of type 'string'"]
