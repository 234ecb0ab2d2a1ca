import base64

import pytest

from approvals.protocol.results import (
    check_call_result,
    check_completion_result,
    check_prompt_result,
    check_read_result,
    tool_error_result,
)

WEATHER_OUTPUT = {
    "type": "object",
    "properties": {"temperature": {"type": "number"}, "conditions": {"type": "string"}},
    "required": ["temperature", "conditions"],
}
B64 = base64.b64encode(b"\x89PNG\r\n\x1a\n").decode()


def errors_of(result, output_schema=None, max_bytes=100_000):
    return check_call_result(result, output_schema, max_bytes=max_bytes).errors


def test_it_passes_a_result_with_every_kind_of_content_block():
    result = {
        "content": [
            {"type": "text", "text": "Sunny", "annotations": {"audience": ["user"], "priority": 0.9}},
            {"type": "image", "data": B64, "mimeType": "image/png"},
            {"type": "audio", "data": B64, "mimeType": "audio/wav"},
            {"type": "resource_link", "uri": "file:///main.rs", "name": "main.rs", "mimeType": "text/x-rust"},
            {"type": "resource", "resource": {"uri": "file:///main.rs", "text": "fn main() {}"}},
            {"type": "resource", "resource": {"uri": "file:///logo.png", "blob": B64, "mimeType": "image/png"}},
        ],
        "isError": False,
        "_meta": {"vendor/trace": "1"},
    }
    assert errors_of(result) == []


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("Sunny", "content must be a list of content blocks"),
        (None, "content must be a list of content blocks"),
        (["Sunny"], "content[0] must be an object"),
        ([{"type": "html", "html": "<b>"}], "content[0] has unknown content type 'html'"),
        ([{"type": "text"}], "content[0].text must be a string"),
        ([{"type": "image", "data": "not base64!", "mimeType": "image/png"}], "content[0].data is not valid base64"),
        ([{"type": "audio", "data": B64}], "content[0].mimeType must be a string"),
        ([{"type": "resource_link", "uri": "file:///a"}], "content[0].name must be a string"),
        ([{"type": "resource_link", "uri": "file:///a", "name": "a", "title": 3}], "content[0].title must be a string"),
        (
            [{"type": "resource", "resource": {"uri": "a"}}],
            "content[0].resource must hold exactly one of text and blob",
        ),
        (
            [{"type": "resource", "resource": {"uri": "a", "text": "x", "blob": B64}}],
            "content[0].resource must hold exactly one of text and blob",
        ),
        (
            [{"type": "resource", "resource": {"uri": "a", "blob": "%%"}}],
            "content[0].resource.blob is not valid base64",
        ),
        ([{"type": "resource", "resource": {"text": "x"}}], "content[0].resource.uri must be a string"),
        ([{"type": "resource", "resource": "file:///a"}], "content[0].resource must be an object"),
        ([{"type": "text", "text": "x", "annotations": ["user"]}], "content[0].annotations must be an object"),
    ],
)
def test_it_reports_content_that_does_not_have_the_spec_shape(content, reason):
    assert errors_of({"content": content}) == [reason]


def test_it_reports_an_is_error_that_is_not_a_boolean():
    assert errors_of({"content": [], "isError": "yes"}) == ["isError must be true or false"]


def test_it_reports_structured_content_that_is_not_an_object():
    assert errors_of({"content": [], "structuredContent": [1, 2]}) == ["structuredContent must be an object"]


def test_it_passes_structured_content_that_follows_the_output_schema():
    result = {"content": [], "structuredContent": {"temperature": 22.5, "conditions": "Partly cloudy"}}
    assert errors_of(result, WEATHER_OUTPUT) == []


def test_it_reports_where_structured_content_breaks_the_output_schema():
    result = {"content": [], "structuredContent": {"temperature": "warm"}}
    assert errors_of(result, WEATHER_OUTPUT) == [
        "structuredContent.temperature: 'warm' is not of type 'number'",
        "structuredContent: 'conditions' is a required property",
    ]


def test_it_requires_structured_content_when_the_tool_has_an_output_schema():
    assert errors_of({"content": [{"type": "text", "text": "22.5"}]}, WEATHER_OUTPUT) == [
        "structuredContent is missing, but the tool declares an outputSchema"
    ]


def test_it_lets_an_error_result_go_without_structured_content():
    assert errors_of(tool_error_result("upstream is down"), WEATHER_OUTPUT) == []


def test_it_reports_an_output_schema_it_cannot_use_instead_of_raising():
    [error] = errors_of({"content": [], "structuredContent": {}}, {"type": "object", "required": 3})
    assert error.startswith("the tool's outputSchema is not usable: required: 3 is not of type 'array'")


def test_it_reports_a_result_larger_than_the_limit_without_looking_further():
    result = {"content": [{"type": "text", "text": "x" * 2000}], "isError": "not checked"}
    [error] = errors_of(result, max_bytes=1000)
    assert error.startswith("the result is ") and error.endswith("bytes of JSON, more than the 1000 allowed")


def test_it_reports_a_result_that_is_not_plain_json():
    assert errors_of({"content": [{"type": "text", "text": "x"}], "score": float("nan")}) == [
        "the result is not plain JSON: nan has no JSON encoding"
    ]


def test_it_reports_a_result_that_is_not_final():
    assert errors_of({"resultType": "input_required", "content": []}) == [
        "resultType 'input_required' is not a final result"
    ]
    assert errors_of({"resultType": "complete", "content": []}) == []


def test_it_reports_a_result_that_is_not_an_object():
    assert errors_of(["content"]) == ["the result must be a JSON object"]


def test_it_builds_a_tool_execution_error_a_model_can_read():
    result = tool_error_result("Denied by an operator: not during business hours")
    assert result == {
        "content": [{"type": "text", "text": "Denied by an operator: not during business hours"}],
        "isError": True,
    }
    assert errors_of(result) == []


def test_it_passes_read_contents_of_text_and_blob_and_refuses_both_or_neither():
    good = {"contents": [{"uri": "a://t", "text": "hi"}, {"uri": "a://b", "blob": B64, "mimeType": "image/png"}]}
    assert check_read_result(good, max_bytes=10_000).ok
    bad = {"contents": [{"uri": "a://t"}, {"uri": "a://b", "blob": "not base64!"}, "x"]}
    assert check_read_result(bad, max_bytes=10_000).errors == [
        "contents[0] must hold exactly one of text and blob",
        "contents[1].blob is not valid base64",
        "contents[2] must be an object",
    ]
    assert "more than the 10 allowed" in check_read_result(good, max_bytes=10).errors[0]


def test_it_passes_prompt_messages_of_a_role_and_a_content_block():
    good = {"description": "d", "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}]}
    assert check_prompt_result(good, max_bytes=10_000).ok
    bad = {"messages": [{"role": "system", "content": {"type": "text", "text": "hi"}}, {"role": "user"}]}
    assert check_prompt_result(bad, max_bytes=10_000).errors == [
        "messages[0].role must be 'user' or 'assistant'",
        "messages[1].content must be an object",
    ]


def test_it_passes_at_most_a_hundred_completion_values():
    assert check_completion_result({"completion": {"values": ["a"], "hasMore": False}}, max_bytes=10_000).ok
    too_many = {"completion": {"values": ["a"] * 101}}
    assert check_completion_result(too_many, max_bytes=10_000).errors == [
        "completion.values holds 101 values, more than 100"
    ]
    assert check_completion_result({"completion": {"values": ["a"], "total": "2"}}, max_bytes=10_000).errors == [
        "completion.total must be an integer"
    ]
