import base64
import copy

import pytest

from approvals.protocol.tools import annotations, check_tool, safe_icons, tool_digest, x_mcp_headers

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 24
GIF = b"GIF89a" + b"\x00" * 24


def data_url(media_type, payload):
    return f"data:{media_type};base64,{base64.b64encode(payload).decode()}"


def full_tool():
    return {
        "name": "get_weather",
        "title": "Weather",
        "description": "Current weather for a place",
        "inputSchema": {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]},
        "outputSchema": {"type": "object", "properties": {"temperature": {"type": "number"}}},
        "annotations": {"readOnlyHint": True, "openWorldHint": True},
        "icons": [{"src": data_url("image/png", PNG), "mimeType": "image/png", "sizes": ["48x48"]}],
        "execution": {"taskSupport": "optional"},
        "_meta": {"vendor/build": "1"},
        "x-vendor-extra": {"kept": True},
    }


def with_schema(properties, **extra):
    return {"name": "t", "inputSchema": {"type": "object", "properties": properties, **extra}}


def test_it_gives_the_same_digest_whatever_the_order_of_keys():
    tool = full_tool()
    reordered = {key: tool[key] for key in reversed(list(tool))}
    reordered["inputSchema"] = {key: tool["inputSchema"][key] for key in reversed(list(tool["inputSchema"]))}
    assert tool_digest(reordered) == tool_digest(tool)


@pytest.mark.parametrize(
    "change",
    [
        lambda t: t.update(name="get_weather2"),
        lambda t: t.update(title="Weather!"),
        lambda t: t.update(description="Now exfiltrates secrets"),
        lambda t: t["inputSchema"]["properties"]["location"].update(description="City"),
        lambda t: t["outputSchema"]["properties"]["temperature"].update(type="integer"),
        lambda t: t["annotations"].update(readOnlyHint=False),
        lambda t: t["icons"][0].update(sizes=["96x96"]),
        lambda t: t["execution"].update(taskSupport="required"),
        lambda t: t["_meta"].update({"vendor/build": "2"}),
        lambda t: t["x-vendor-extra"].update(kept=False),
        lambda t: t.pop("annotations"),
    ],
)
def test_it_changes_the_digest_when_anything_in_the_definition_changes(change):
    tool = full_tool()
    changed = copy.deepcopy(tool)
    change(changed)
    assert tool_digest(changed) != tool_digest(tool)


def test_it_accepts_a_full_definition_and_keeps_unknown_fields():
    tool = full_tool()
    check = check_tool(tool)
    assert check.ok and check.errors == [] and check.warnings == []
    assert tool["x-vendor-extra"] == {"kept": True}


@pytest.mark.parametrize(
    "definition",
    [
        {"name": "calculate_sum", "inputSchema": {"type": "object", "properties": {"a": {"type": "number"}}}},
        {
            "name": "calculate_sum",
            "inputSchema": {
                "$schema": "http://json-schema.org/draft-07/schema#",
                "type": "object",
                "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                "required": ["a", "b"],
            },
        },
        {"name": "get_current_time", "inputSchema": {"type": "object", "additionalProperties": False}},
        {"name": "admin.tools.list", "inputSchema": {"type": "object"}},
    ],
)
def test_it_accepts_the_examples_of_the_spec(definition):
    check = check_tool(definition)
    assert (check.errors, check.warnings) == ([], [])


@pytest.mark.parametrize("name", ["", "has space", "comma,name", "x" * 129, "naïve"])
def test_it_only_warns_about_a_name_that_breaks_the_spec_naming_rule(name):
    check = check_tool({"name": name, "inputSchema": {"type": "object"}})
    assert check.ok
    assert check.warnings == [
        f"name {name!r} breaks the spec's rule: 1 to 128 characters of A-Z, a-z, 0-9, '_', '-' and '.'"
    ]


@pytest.mark.parametrize(
    "definition", [{"inputSchema": {"type": "object"}}, {"name": 7, "inputSchema": {"type": "object"}}]
)
def test_it_rejects_a_tool_without_a_string_name(definition):
    assert check_tool(definition).errors == ["name must be a string"]


def test_it_rejects_a_definition_that_is_not_an_object():
    assert check_tool(["name"]).errors == ["a tool definition must be a JSON object"]


@pytest.mark.parametrize(
    ("input_schema", "reason"),
    [
        (None, "inputSchema must be a JSON Schema object"),
        ({"type": "string"}, 'inputSchema must have "type": "object"'),
        ({"properties": {}}, 'inputSchema must have "type": "object"'),
        (
            {"type": "object", "properties": {"a": {"type": "nosuchtype"}}},
            "inputSchema is not a usable JSON Schema: "
            "properties.a.type: 'nosuchtype' is not valid under any of the given schemas",
        ),
        (
            {"type": "object", "properties": {"n": {"type": "integer", "minimum": "x"}}},
            "inputSchema is not a usable JSON Schema: properties.n.minimum: 'x' is not of type 'number'",
        ),
    ],
)
def test_it_rejects_an_input_schema_that_is_not_a_valid_object_schema(input_schema, reason):
    assert check_tool({"name": "t", "inputSchema": input_schema}).errors == [reason]


def test_it_rejects_an_output_schema_that_is_invalid_or_not_an_object_schema():
    tool = {"name": "t", "inputSchema": {"type": "object"}}
    assert check_tool({**tool, "outputSchema": {"type": "array"}}).errors == ['outputSchema must have "type": "object"']
    assert (
        "outputSchema is not a usable JSON Schema"
        in check_tool({**tool, "outputSchema": {"type": "object", "required": 3}}).errors[0]
    )


@pytest.mark.parametrize(
    ("field", "value", "reason"),
    [
        ("title", 3, "title must be a string"),
        ("description", ["x"], "description must be a string"),
        ("annotations", [], "annotations must be an object"),
        ("annotations", {"readOnlyHint": "yes"}, "annotations.readOnlyHint must be true or false"),
        ("annotations", {"title": 1}, "annotations.title must be a string"),
        ("icons", {"src": "x"}, "icons must be a list"),
        ("icons", ["https://example.com/i.png"], "icons[0] must be an object with a string src"),
        ("icons", [{"src": 5}], "icons[0] must be an object with a string src"),
        ("execution", "optional", "execution must be an object"),
        ("_meta", "m", "_meta must be an object"),
    ],
)
def test_it_rejects_optional_fields_of_the_wrong_type(field, value, reason):
    assert check_tool({"name": "t", "inputSchema": {"type": "object"}, field: value}).errors == [reason]


def test_it_reads_a_null_optional_field_as_absent():
    check = check_tool(
        {"name": "t", "inputSchema": {"type": "object"}, "title": None, "outputSchema": None, "icons": None}
    )
    assert check.ok


@pytest.mark.parametrize(
    ("properties", "reason"),
    [
        (
            {"region": {"type": "string", "x-mcp-header": ""}},
            "x-mcp-header '' on property 'region' must be a non-empty string",
        ),
        (
            {"region": {"type": "string", "x-mcp-header": 7}},
            "x-mcp-header 7 on property 'region' must be a non-empty string",
        ),
        (
            {"region": {"type": "string", "x-mcp-header": "Cloud Region"}},
            "x-mcp-header 'Cloud Region' on property 'region' contains ' '; "
            "a header name may hold only letters, digits and !#$%&'*+-.^_`|~",
        ),
        (
            {"region": {"type": "string", "x-mcp-header": "Region:1"}},
            "x-mcp-header 'Region:1' on property 'region' contains ':'; "
            "a header name may hold only letters, digits and !#$%&'*+-.^_`|~",
        ),
        (
            {"region": {"type": "string", "x-mcp-header": "Region\r\nX-Injected"}},
            "x-mcp-header 'Region\\r\\nX-Injected' on property 'region' contains '\\r'; "
            "a header name may hold only letters, digits and !#$%&'*+-.^_`|~",
        ),
        (
            {"a": {"type": "string", "x-mcp-header": "Region"}, "b": {"type": "string", "x-mcp-header": "REGION"}},
            "x-mcp-header 'REGION' on property 'b' repeats 'Region' of property 'a'; "
            "header names must differ regardless of case",
        ),
        (
            {"filter": {"type": "object", "x-mcp-header": "Filter"}},
            "x-mcp-header 'Filter' on property 'filter' needs a property of type string, integer or boolean, "
            "not 'object'",
        ),
        (
            {"id": {"type": ["string", "null"], "x-mcp-header": "Id"}},
            "x-mcp-header 'Id' on property 'id' needs a property of type string, integer or boolean, "
            "not ['string', 'null']",
        ),
        (
            {"tags": {"type": "array", "items": {"type": "string", "x-mcp-header": "Tag"}}},
            "x-mcp-header 'Tag' at 'properties.tags.items' is not on a property reached through plain 'properties' "
            "from the root (it sits under 'items')",
        ),
        (
            {"id": {"anyOf": [{"type": "string", "x-mcp-header": "Id"}]}},
            "x-mcp-header 'Id' at 'properties.id.anyOf.0' is not on a property reached through plain 'properties' "
            "from the root (it sits under 'anyOf')",
        ),
    ],
)
def test_it_rejects_a_tool_whose_x_mcp_header_breaks_a_rule_and_names_property_and_header(properties, reason):
    check = check_tool(with_schema(properties))
    assert not check.ok
    assert check.errors == [reason]


def test_it_rejects_an_x_mcp_header_reached_only_through_a_definition_or_on_the_root():
    definition = with_schema({"a": {"$ref": "#/$defs/a"}}, **{"$defs": {"a": {"type": "string", "x-mcp-header": "A"}}})
    assert check_tool(definition).errors == [
        "x-mcp-header 'A' at '$defs.a' is not on a property reached through plain 'properties' from the root "
        "(it sits under '$defs')"
    ]
    on_root = {"name": "t", "inputSchema": {"type": "object", "x-mcp-header": "Root"}}
    assert check_tool(on_root).errors == [
        "x-mcp-header 'Root' on the schema root must sit on a property, not on the schema itself"
    ]


def test_it_ignores_the_x_mcp_header_key_inside_example_data():
    definition = with_schema({"a": {"type": "object", "default": {"x-mcp-header": "not a schema"}}})
    assert check_tool(definition).ok


def test_it_accepts_valid_x_mcp_headers_and_maps_them_to_their_property_paths():
    definition = with_schema(
        {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "query": {"type": "string"},
            "limit": {"type": "integer", "x-mcp-header": "Limit"},
            "dry_run": {"type": "boolean", "x-mcp-header": "Dry-Run"},
            "target": {"type": "object", "properties": {"tenant": {"type": "string", "x-mcp-header": "Tenant_ID.v2"}}},
        }
    )
    assert check_tool(definition).ok
    assert x_mcp_headers(definition) == {
        "Region": ["region"],
        "Limit": ["limit"],
        "Dry-Run": ["dry_run"],
        "Tenant_ID.v2": ["target", "tenant"],
    }


def test_it_rejects_a_header_on_a_number_which_has_no_header_form():
    check = check_tool(with_schema({"ratio": {"type": "number", "x-mcp-header": "Ratio"}}))
    assert check.errors == [
        "x-mcp-header 'Ratio' on property 'ratio' needs a property of type string, integer or boolean, not 'number'"
    ]


def test_it_maps_only_the_valid_headers_of_a_broken_definition():
    definition = with_schema(
        {
            "a": {"type": "string", "x-mcp-header": "A"},
            "b": {"type": "string", "x-mcp-header": "a"},
            "c": {"type": "object", "x-mcp-header": "C"},
        }
    )
    assert x_mcp_headers(definition) == {"A": ["a"]}
    assert x_mcp_headers({"name": "t"}) == {}


def test_it_fills_in_the_spec_defaults_for_annotations():
    assert annotations({"name": "t"}) == {
        "readOnlyHint": False,
        "destructiveHint": True,
        "idempotentHint": False,
        "openWorldHint": True,
    }


def test_it_lets_given_annotations_override_the_defaults_but_not_malformed_ones():
    given = {"annotations": {"readOnlyHint": True, "destructiveHint": "no", "title": "Weather"}}
    assert annotations(given) == {
        "readOnlyHint": True,
        "destructiveHint": True,
        "idempotentHint": False,
        "openWorldHint": True,
        "title": "Weather",
    }


def test_it_shows_small_raster_data_url_icons():
    icons = [
        {"src": data_url("image/png", PNG)},
        {"src": data_url("image/gif", GIF), "mimeType": "image/gif"},
        {"src": data_url("image/jpeg", b"\xff\xd8\xff\xe0" + b"\x00" * 16)},
        {"src": data_url("image/webp", b"RIFF\x10\x00\x00\x00WEBPVP8 " + b"\x00" * 8)},
    ]
    assert safe_icons({"icons": icons}) == icons


@pytest.mark.parametrize(
    "icon",
    [
        {"src": "https://example.com/icon.png", "mimeType": "image/png"},
        {"src": "http://example.com/icon.png"},
        {"src": data_url("image/svg+xml", b"<svg onload='alert(1)'/>")},
        {"src": "data:image/svg+xml;utf8,<svg/>"},
        {"src": data_url("image/png", b"<svg onload='alert(1)'/>")},
        {"src": data_url("image/png", GIF)},
        {"src": data_url("image/png", PNG), "mimeType": "image/svg+xml"},
        {"src": data_url("image/png", PNG + b"\x00" * 64 * 1024)},
        {"src": "data:image/png;base64,%%%%"},
        {"src": "data:image/png," + PNG.decode("latin-1")},
        {"src": "javascript:alert(1)"},
        "data:image/png;base64,AAAA",
    ],
)
def test_it_hides_icons_that_are_not_small_raster_data_urls(icon):
    assert safe_icons({"icons": [icon, {"src": data_url("image/png", PNG)}]}) == [{"src": data_url("image/png", PNG)}]


def test_it_shows_no_icons_when_icons_are_absent_or_malformed():
    assert safe_icons({"name": "t"}) == []
    assert safe_icons({"icons": "x"}) == []
