from approvals.display.schema import MAX_DEPTH, MAX_ROWS, schema_table

ORDER = {
    "type": "object",
    "required": ["customer", "lines"],
    "properties": {
        "customer": {
            "type": "object",
            "title": "Customer",
            "required": ["id"],
            "properties": {
                "id": {"type": "string", "format": "uuid"},
                "tier": {"enum": ["free", "pro"], "default": "free"},
            },
        },
        "lines": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "properties": {"sku": {"type": "string"}, "qty": {"type": "integer", "minimum": 1, "maximum": 99}},
            },
        },
        "tags": {"type": "array", "items": {"type": "string"}},
        "note": {"type": ["string", "null"], "maxLength": 200, "x-mcp-header": "Note"},
    },
}


def rows_by_path(schema):
    return {row.path: row for row in schema_table(schema).rows}


def test_it_lists_properties_depth_first_with_nested_objects_under_their_parent():
    rows = schema_table(ORDER).rows
    assert [(r.path, r.depth) for r in rows] == [
        ("customer", 1),
        ("customer.id", 2),
        ("customer.tier", 2),
        ("lines", 1),
        ("lines.[items]", 2),
        ("lines.[items].sku", 3),
        ("lines.[items].qty", 3),
        ("tags", 1),
        ("note", 1),
    ]


def test_it_marks_required_properties_at_each_level():
    rows = rows_by_path(ORDER)
    assert rows["customer"].required and rows["lines"].required and not rows["tags"].required
    assert rows["customer.id"].required and not rows["customer.tier"].required


def test_it_names_types_including_arrays_of_a_type_and_unions():
    rows = rows_by_path(ORDER)
    assert rows["customer"].type == "object"
    assert rows["lines"].type == "array of object"
    assert rows["tags"].type == "array of string"
    assert rows["note"].type == "string | null"


def test_it_shows_enum_default_format_and_bounds_as_constraints():
    rows = rows_by_path(ORDER)
    assert dict(rows["customer.tier"].constraints) == {"enum": '["free", "pro"]', "default": '"free"'}
    assert dict(rows["customer.id"].constraints) == {"format": '"uuid"'}
    assert dict(rows["lines.[items].qty"].constraints) == {"minimum": "1", "maximum": "99"}
    assert dict(rows["lines"].constraints) == {"minItems": "1"}


def test_it_lists_unknown_keywords_apart_from_constraints():
    note = rows_by_path(ORDER)["note"]
    assert note.unknown == [("x-mcp-header", '"Note"')]
    assert dict(note.constraints) == {"maxLength": "200"}


def test_it_lists_variants_and_definitions_as_nested_rows():
    schema = {
        "type": "object",
        "properties": {"target": {"oneOf": [{"type": "string"}, {"$ref": "#/$defs/Ref"}]}},
        "$defs": {"Ref": {"type": "object", "properties": {"id": {"type": "integer"}}}},
    }
    rows = rows_by_path(schema)
    assert rows["target"].type == "see variants"
    assert rows["target.oneOf[1]"].constraints == [("$ref", '"#/$defs/Ref"')]
    assert rows["$defs/Ref.id"].type == "integer"


def test_it_stops_nesting_at_the_depth_limit_and_says_so():
    schema = {"type": "string"}
    for _ in range(MAX_DEPTH * 20):
        schema = {"type": "object", "properties": {"deeper": schema}}
    rows = schema_table(schema).rows
    assert len(rows) == MAX_DEPTH
    assert "nested deeper" in rows[-1].note


def test_it_caps_the_rows_of_a_huge_schema():
    schema = {"type": "object", "properties": {f"p{n}": {"type": "string"} for n in range(MAX_ROWS * 10)}}
    table = schema_table(schema)
    assert len(table.rows) == MAX_ROWS and table.truncated


def test_it_clips_long_text_and_survives_values_of_the_wrong_type():
    schema = {
        "type": "object",
        "properties": {"a": {"title": {"not": "a string"}, "description": "x" * 10_000}, "b": 42, "c": True},
    }
    rows = rows_by_path(schema)
    assert rows["a"].title == '{"not": "a string"}'
    assert len(rows["a"].description) <= 600
    assert rows["b"].type == "invalid schema"
    assert rows["c"].type == "any value"


def test_it_keeps_the_root_keywords_for_the_heading():
    root = schema_table({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "x-root": 1}).root
    assert ("$schema", '"http://json-schema.org/draft-07/schema#"') in root.constraints
    assert root.unknown == [("x-root", "1")]
