"""A token's legacy sessions and resource subscriptions are capped; past a cap the client is told so in JSON-RPC."""

from approvals.gateway import subscriptions
from approvals.tokens.credentials import create_token
from approvals.tokens.models import McpSession
from tests.fixtures.gateway import MODERN, modern_envelope
from tests.gateway.conftest import Raw


def refusal(response) -> str:
    error = response.json()["error"]
    assert error["code"] in (-32600, -32602), error
    return error["message"]


def test_it_refuses_a_session_past_the_tokens_cap_until_one_ends(raw, settings):
    settings.MCP_MAX_SESSIONS_PER_TOKEN = 2
    first, _ = raw.initialize(), raw.initialize()
    params = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "x", "version": "0"}}
    refused = raw.post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})
    assert refused.status_code == 429 and "MCP_MAX_SESSIONS_PER_TOKEN" in refusal(refused)
    assert McpSession.objects.filter(closed_at__isnull=True).count() == 2
    ended = raw.client.delete(raw.url, headers={**raw.headers, "Mcp-Session-Id": first})
    assert ended.status_code == 204
    assert raw.initialize()


def test_it_counts_sessions_per_token(raw, settings):
    settings.MCP_MAX_SESSIONS_PER_TOKEN = 1
    raw.initialize()
    other = Raw(raw.url, create_token("another client")[1])
    assert other.initialize()
    other.client.close()


def test_a_legacy_subscription_past_the_tokens_cap_is_refused_and_not_kept(raw, surface_server, settings):
    settings.MCP_MAX_SUBSCRIPTIONS_PER_TOKEN = 1
    first, second = raw.initialize(), raw.initialize()
    assert raw.legacy(first, "resources/subscribe", uri="docs://readme").json()["result"] == {}
    refused = raw.legacy(second, "resources/subscribe", uri="docs://logo.png")
    assert "MCP_MAX_SUBSCRIPTIONS_PER_TOKEN" in refusal(refused)
    assert McpSession.objects.get(pk=second).resource_subscriptions == []
    # Subscribing again to what the session holds takes no new place.
    assert raw.legacy(first, "resources/subscribe", msg_id=2, uri="docs://readme").json()["result"] == {}


def test_a_listen_stream_that_would_pass_the_tokens_cap_is_refused_before_it_opens(raw, surface_server, settings):
    settings.MCP_MAX_SUBSCRIPTIONS_PER_TOKEN = 1
    session = raw.initialize()
    assert raw.legacy(session, "resources/subscribe", uri="docs://readme").json()["result"] == {}
    headers = {"Mcp-Method": "subscriptions/listen", "MCP-Protocol-Version": MODERN}
    body = {
        "jsonrpc": "2.0",
        "id": 5,
        "method": "subscriptions/listen",
        "params": modern_envelope(notifications={"resourceSubscriptions": ["docs://logo.png"]}),
    }
    refused = raw.post(body, headers)
    assert refused.headers["Content-Type"].startswith("application/json")
    assert "MCP_MAX_SUBSCRIPTIONS_PER_TOKEN" in refusal(refused)
    assert subscriptions.LISTENING[McpSession.objects.get(pk=session).token_id] == 0
