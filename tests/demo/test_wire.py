"""Whatever arrives on stdin, the server answers in JSON-RPC terms and keeps serving."""

import json

import pytest

from tests.demo.conftest import envelope, tools_call


@pytest.mark.parametrize(
    "line",
    [b"this is not json", b'{"jsonrpc": "2.0", "id": 1, "method": "ping"', b"\xff\xfe{}"],
    ids=["prose", "truncated", "not-utf8"],
)
async def test_it_answers_a_line_that_is_not_json_with_a_parse_error(raw, line):
    await raw.send(line)

    answer = await raw.receive()
    assert answer["id"] is None and answer["error"]["code"] == -32700
    assert (await raw.request(9, "ping"))["result"] == {}


@pytest.mark.parametrize(
    "message, answered_id",
    [
        ([{"jsonrpc": "2.0", "id": 1, "method": "ping"}], None),
        ({"jsonrpc": "1.0", "id": 2, "method": "ping"}, 2),
        ({"jsonrpc": "2.0", "id": 3, "method": ""}, 3),
        ({"jsonrpc": "2.0", "id": 4, "method": "ping", "params": [1, 2]}, 4),
        ("just a string", None),
    ],
    ids=["batch", "old-jsonrpc", "empty-method", "list-params", "string"],
)
async def test_it_answers_a_message_that_is_no_request_with_invalid_request(raw, message, answered_id):
    await raw.send(json.dumps(message).encode())

    answer = await raw.receive()
    assert answer["id"] == answered_id and answer["error"]["code"] == -32600


async def test_it_refuses_a_line_over_four_mebibytes_and_reads_on(raw):
    await raw.send(b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": "' + b"x" * (4 << 20) + b'"}}')

    answer = await raw.receive()
    assert answer["id"] is None and answer["error"]["code"] == -32700
    assert (await raw.request(2, "ping"))["result"] == {}


async def test_it_answers_json_nested_too_deep_to_parse_with_a_parse_error(raw):
    await raw.send(b"[" * 100_000 + b"]" * 100_000)

    answer = await raw.receive()
    assert answer["id"] is None and answer["error"]["code"] == -32700
    assert (await raw.request(1, "ping"))["result"] == {}


async def test_it_ignores_a_response_to_nothing_it_asked(raw):
    await raw.send({"jsonrpc": "2.0", "id": "demo-99", "result": {"action": "accept"}})

    assert await raw.request(1, "ping") == {"jsonrpc": "2.0", "id": 1, "result": {}}


async def test_it_ignores_blank_lines(raw):
    await raw.send(b"   ")

    assert (await raw.request(1, "ping"))["result"] == {}


async def test_it_answers_an_unknown_method_with_method_not_found(raw):
    await raw.initialize()

    answer = await raw.request(1, "tools/dance")

    assert answer["error"]["code"] == -32601 and "tools/dance" in answer["error"]["message"]


@pytest.mark.parametrize(
    "method, params",
    [
        ("tools/call", {"name": 42}),
        ("tools/call", {"name": "lookup_customer", "arguments": "C001"}),
        ("tools/call", {"name": "no_such_tool", "arguments": {}}),
        ("tools/list", {"cursor": 5}),
        ("tools/list", {"cursor": "not-a-cursor-we-gave"}),
        ("logging/setLevel", {"level": "loud"}),
    ],
    ids=["numeric-name", "string-arguments", "unknown-tool", "numeric-cursor", "foreign-cursor", "unknown-level"],
)
async def test_it_answers_params_of_the_wrong_shape_with_invalid_params(raw, method, params):
    await raw.initialize()

    answer = await raw.request(1, method, params)

    assert answer["error"]["code"] == -32602


async def test_it_answers_invalid_params_in_2026_too(raw):
    answer = await raw.request(1, "tools/call", envelope(name="no_such_tool"))

    assert answer["error"]["code"] == -32602 and answer["error"]["message"] == "Unknown tool: no_such_tool"


async def test_it_refuses_a_second_request_with_the_id_of_a_running_one(raw):
    await raw.initialize()
    call = tools_call(1, "export_report", {"report": "orders", "seconds": 1})
    await raw.send(call)
    await raw.send(call)

    refused = await raw.receive()
    assert refused["id"] == 1 and refused["error"]["code"] == -32600
    assert "result" in await raw.answer(1)


async def test_it_sends_log_messages_at_the_level_the_client_asked_for(raw):
    await raw.initialize()
    await raw.request(1, "logging/setLevel", {"level": "warning"})

    await raw.send(tools_call(2, "delete_record", {"record_type": "order", "record_id": "O1001"}))
    await raw.answer(2)

    (logged,) = raw.others
    assert logged["method"] == "notifications/message"
    assert logged["params"]["level"] == "warning" and "Deleted order O1001" in logged["params"]["data"]
