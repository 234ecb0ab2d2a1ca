"""An upstream's URL elicitations that come outside a request to the client: the -32042 error and its completion."""

import json
import shlex
import sys
from unittest.mock import ANY

import pytest

from approvals.calls.models import Call
from approvals.policy.models import PolicyRule
from tests.fixtures.gateway import LEGACY
from tests.fixtures.servers import SERVERS

URL_CLIENT = {"elicitation": {"form": {}, "url": {}}}
# What the browser-step scenario of tests/servers/stdio_scenarios.py asks for.
SIGN_IN_URL = "https://auth.example/sign-in?step=1"


@pytest.fixture
def browser_step(transactional_db, add_fixed_server):
    command = shlex.join([sys.executable, str(SERVERS / "stdio_scenarios.py"), "browser-step"])
    server = add_fixed_server("browser", transport="stdio", command=command, tool_prefix="")
    PolicyRule.objects.create(name="allow", action=PolicyRule.Action.ALLOW, tool_glob="*")
    return server


def session_of(raw, capabilities: dict) -> str:
    params = {"protocolVersion": LEGACY, "capabilities": capabilities, "clientInfo": {"name": "t", "version": "0"}}
    response = raw.post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})
    return response.headers["Mcp-Session-Id"]


def call(raw, session_id: str, tool: str, stream=False) -> list[dict]:
    """The messages answering a tools/call: on an SSE stream, or the one JSON answer."""
    accept = "application/json, text/event-stream" if stream else "application/json"
    response = raw.legacy(session_id, "tools/call", headers={"Accept": accept}, name=tool, arguments={})
    if not stream:
        return [response.json()]
    return [json.loads(line[len("data: ") :]) for line in response.text.splitlines() if line.startswith("data: ")]


def test_a_client_that_takes_url_elicitation_gets_the_upstreams_error_as_it_is(raw, browser_step):
    [answer] = call(raw, session_of(raw, URL_CLIENT), "sign_in")

    assert answer["error"]["code"] == -32042
    [elicitation] = answer["error"]["data"]["elicitations"]
    assert elicitation == {"mode": "url", "url": SIGN_IN_URL, "message": ANY, "elicitationId": "sign-in-1"}
    assert Call.objects.get().status == Call.Status.FAILED


def test_a_client_that_cannot_gets_a_tool_error_naming_the_url(raw, browser_step):
    [answer] = call(raw, session_of(raw, {"elicitation": {"form": {}}}), "sign_in")

    assert answer["result"]["isError"] is True
    assert SIGN_IN_URL in answer["result"]["content"][0]["text"]


def test_a_modern_client_reads_the_url_in_the_tool_error_since_its_revision_has_no_such_error(raw, browser_step):
    response = raw.modern("tools/call", headers={"Accept": "application/json"}, name="sign_in", arguments={})

    result = response.json()["result"]
    assert result["isError"] is True
    assert SIGN_IN_URL in result["content"][0]["text"]


def test_the_completion_of_a_url_elicitation_reaches_the_calls_stream(raw, browser_step):
    messages = call(raw, session_of(raw, URL_CLIENT), "signed_in", stream=True)

    assert messages[0] == {
        "jsonrpc": "2.0",
        "method": "notifications/elicitation/complete",
        "params": {"elicitationId": "sign-in-1"},
    }
    assert messages[-1]["result"]["content"][0]["text"] == "signed in"
