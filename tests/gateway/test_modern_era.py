"""The 2026-07-28 era: stateless POSTs whose headers must agree with their envelope."""

import asyncio
import json

import pytest
from asgiref.sync import sync_to_async

from approvals.demo import COMMAND_LINE
from approvals.policy.models import PolicyRule
from tests.fixtures.catalog import add_synced_server
from tests.fixtures.gateway import MODERN, sdk_client

SERVER_INFO = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"


def error_of(response) -> dict:
    return response.json()["error"]


def test_it_discovers_every_version_it_speaks_and_what_it_offers(raw):
    result = raw.modern("server/discover").json()["result"]

    assert result["supportedVersions"] == ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"]
    assert result["capabilities"] == {
        "tools": {"listChanged": True},
        "logging": {},
        "extensions": {"io.modelcontextprotocol/tasks": {}},
    }
    assert result["instructions"]
    assert result["resultType"] == "complete"
    assert result["cacheScope"] == "public" and result["ttlMs"] > 0
    assert result["_meta"][SERVER_INFO]["name"] == "mcp-approval-console"


def test_it_marks_the_tool_list_private_to_the_token_and_signs_it(raw, demo_server):
    result = raw.modern("tools/list").json()["result"]

    assert result["cacheScope"] == "private"
    assert result["ttlMs"] >= 0
    assert result["resultType"] == "complete"
    assert result["_meta"][SERVER_INFO]["name"] == "mcp-approval-console"
    assert "demo_lookup_customer" in [tool["name"] for tool in result["tools"]]


@pytest.mark.parametrize(
    "headers, problem",
    [
        ({"Mcp-Method": None}, "Mcp-Method"),
        ({"Mcp-Method": "tools/call"}, "Mcp-Method"),
        ({"MCP-Protocol-Version": None}, "MCP-Protocol-Version"),
        ({"MCP-Protocol-Version": "2025-11-25-bis"}, "MCP-Protocol-Version"),
    ],
    ids=["missing-method", "other-method", "missing-version", "other-version"],
)
def test_it_refuses_headers_that_disagree_with_the_body(raw, headers, problem):
    routing = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/list", **headers}
    body = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/list",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
            }
        },
    }

    response = raw.post(body, {name: value for name, value in routing.items() if value is not None})

    assert response.status_code == 400
    assert error_of(response)["code"] == -32020
    assert problem in error_of(response)["message"]
    assert response.json()["id"] == 3


def test_it_refuses_a_call_whose_mcp_name_names_another_tool(raw, demo_server):
    response = raw.modern(
        "tools/call", name="demo_lookup_customer", arguments={}, headers={"Mcp-Name": "demo_delete_record"}
    )

    assert response.status_code == 400
    assert error_of(response)["code"] == -32020


def test_it_reads_a_base64_encoded_mcp_name(raw, demo_server):
    PolicyRule.objects.create(action="allow", tool_glob="*")
    encoded = "=?base64?ZGVtb19sb29rdXBfY3VzdG9tZXI=?="  # demo_lookup_customer

    response = raw.modern(
        "tools/call",
        name="demo_lookup_customer",
        arguments={"customer_id": "C007"},
        headers={"Mcp-Name": encoded, "Accept": "application/json"},
    )

    assert response.status_code == 200, response.text
    assert "C007" in response.json()["result"]["content"][0]["text"]


def test_it_refuses_a_call_whose_mcp_param_header_disagrees_with_its_argument(raw, demo_server):
    arguments = {"status": "shipped"}

    missing = raw.modern("tools/call", name="demo_search_orders", arguments=arguments)
    different = raw.modern(
        "tools/call", name="demo_search_orders", arguments=arguments, headers={"Mcp-Param-Order-Status": "pending"}
    )

    assert (missing.status_code, error_of(missing)["code"]) == (400, -32020)
    assert "Mcp-Param-Order-Status" in error_of(missing)["message"]
    assert (different.status_code, error_of(different)["code"]) == (400, -32020)


def test_it_tells_an_unsupported_version_which_ones_it_speaks(raw):
    future = "2099-01-01"
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/list",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": future,
                "io.modelcontextprotocol/clientCapabilities": {},
            }
        },
    }

    response = raw.post(body, {"MCP-Protocol-Version": future, "Mcp-Method": "tools/list"})

    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == -32022
    assert error["data"]["requested"] == future
    assert MODERN in error["data"]["supported"]


def test_it_requires_the_client_capabilities_in_the_envelope(raw):
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/list",
        "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": MODERN}},
    }

    response = raw.post(body, {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/list"})

    assert response.status_code == 400
    assert error_of(response)["code"] == -32602
    assert "clientCapabilities" in error_of(response)["message"]


@pytest.mark.parametrize("method", ["GET", "DELETE"])
def test_it_allows_only_post(raw, method):
    response = raw.client.request(method, raw.url, headers={**raw.headers, "MCP-Protocol-Version": MODERN})

    assert response.status_code == 405
    assert response.headers["Allow"] == "POST"


def test_it_ignores_a_session_id_and_mints_none(raw):
    response = raw.modern("tools/list", headers={"Mcp-Session-Id": "left-over-from-2025"})

    assert response.status_code == 200
    assert "Mcp-Session-Id" not in response.headers


def test_it_answers_a_call_as_json_to_a_client_that_takes_no_stream(raw, demo_server):
    PolicyRule.objects.create(action="allow", tool_glob="demo_lookup_*")

    response = raw.modern(
        "tools/call",
        name="demo_lookup_customer",
        arguments={"customer_id": "C007"},
        headers={"Accept": "application/json"},
    )

    assert response.headers["content-type"] == "application/json"
    result = response.json()["result"]
    assert result["resultType"] == "complete"
    assert result["_meta"][SERVER_INFO]["name"] == "mcp-approval-console"


def test_it_answers_a_call_on_an_sse_stream_that_ends_with_the_response(raw, demo_server):
    PolicyRule.objects.create(action="allow", tool_glob="demo_lookup_*")

    response = raw.modern("tools/call", msg_id=9, name="demo_lookup_customer", arguments={"customer_id": "C007"})

    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["X-Accel-Buffering"] == "no"
    assert response.headers["Cache-Control"] == "no-cache"
    events = [json.loads(line[len("data: ") :]) for line in response.text.splitlines() if line.startswith("data: ")]
    assert events[-1]["id"] == 9
    assert events[-1]["result"]["resultType"] == "complete"


def test_it_opens_a_listen_stream_with_an_acknowledgement_first(raw):
    with raw.client.stream(
        "POST",
        raw.url,
        json={
            "jsonrpc": "2.0",
            "id": "listen-1",
            "method": "subscriptions/listen",
            "params": {
                "notifications": {"toolsListChanged": True, "promptsListChanged": True},
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": MODERN,
                    "io.modelcontextprotocol/clientCapabilities": {},
                },
            },
        },
        headers={
            **raw.headers,
            "Content-Type": "application/json",
            "MCP-Protocol-Version": MODERN,
            "Mcp-Method": "subscriptions/listen",
        },
    ) as response:
        first = next(line for line in response.iter_lines() if line.startswith("data: "))

    ack = json.loads(first[len("data: ") :])
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    # Prompts never change here, so only the tool list is promised.
    assert ack["params"]["notifications"] == {"toolsListChanged": True}
    assert ack["params"]["_meta"][SUBSCRIPTION_ID] == "listen-1"


async def test_it_tells_a_listening_client_when_the_tool_list_changes(mcp_url, secret, demo_server):
    async with sdk_client(mcp_url, secret) as client:
        before = {tool.name for tool in (await client.list_tools()).tools}
        async with client.listen(tools_list_changed=True) as subscription:
            await sync_to_async(add_synced_server)("second demo", transport="stdio", command=COMMAND_LINE)
            event = await asyncio.wait_for(anext(subscription), timeout=10)
        after = {tool.name for tool in (await client.list_tools()).tools}

    assert type(event).__name__ == "ToolsListChanged"
    assert "second_demo_lookup_customer" in after - before
