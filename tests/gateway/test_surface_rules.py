"""Rules and routes reach every path to a resource or a prompt: completion and subscription too, every spelling of a
URI, and no server's template reaches another's URI."""

import json

import pytest
from asgiref.sync import async_to_sync, sync_to_async

from approvals.audit.models import AuditEvent
from approvals.calls.upstream_sessions import session_pool
from approvals.catalog import sync
from approvals.catalog.surface_models import ResourceTemplate
from approvals.gateway import streams, subscriptions
from approvals.live import events
from approvals.policy import rules
from approvals.protocol import revisions
from approvals.tokens.context import ClientContext
from approvals.tokens.credentials import create_token
from approvals.tokens.models import McpSession
from approvals.upstream import ServerIdentity
from tests.fixtures.catalog import make_server
from tests.gateway.conftest import Raw

eras = pytest.mark.parametrize("era", ["modern", "legacy"])


def add_rule(action, applies_to, pattern, **fields):
    return rules.create_rule(rules.RuleRequest(action=action, applies_to=applies_to, tool_glob=pattern, **fields))


def ask(raw: Raw, era: str, method: str, **params):
    if era == "modern":
        return raw.modern(method, **params)
    return raw.legacy(raw.initialize(), method, **params)


def answer_of(response) -> dict:
    """The JSON-RPC answer, sent as JSON or as the last event of an SSE stream (a read a rule governs)."""
    if response.headers["Content-Type"].startswith("text/event-stream"):
        data = [line for line in response.text.splitlines() if line.startswith("data: ")]
        return json.loads(data[-1][len("data: ") :])
    return response.json()


def complete(raw, era, ref, name, value):
    return ask(raw, era, "completion/complete", ref=ref, argument={"name": name, "value": value})


@eras
def test_a_deny_rule_on_a_prompt_refuses_its_completion(raw, surface_server, era):
    add_rule("deny", "prompt", "surface_review_code", name="no code review", message="not here")
    ref = {"type": "ref/prompt", "name": "surface_review_code"}

    error = complete(raw, era, ref, "language", "p").json()["error"]

    assert error["code"] == -32600
    assert error["message"] == "completion of surface_review_code was denied by policy (no code review): not here."
    assert error["data"] == {"status": "refused", "rule": "no code review"}
    event = AuditEvent.objects.get(action="completion.asked")
    assert event.data["outcome"] == "error" and event.data["code"] == -32600


@eras
def test_an_ask_rule_refuses_the_completions_of_a_template_that_would_expand_into_what_it_names(
    raw, surface_server, era
):
    add_rule("ask", "resource", "notes://by-topic/b*", name="beta is private")
    ref = {"type": "ref/resource", "uri": "notes://by-topic/{topic}"}

    refused = complete(raw, era, ref, "topic", "b").json()
    answered = complete(raw, era, ref, "topic", "a").json()

    assert refused["error"]["code"] == -32600
    assert "asks an operator about notes://by-topic/b" in refused["error"]["message"]
    assert answered["result"]["completion"]["values"] == ["alpha"]


def test_an_allow_rule_and_a_rule_on_conditions_that_hold_leave_completion_alone(raw, surface_server):
    add_rule("allow", "prompt", "surface_*", name="prompts are fine")
    add_rule("deny", "prompt", "surface_review_code", conditions=[{"path": "language", "op": "eq", "value": "rust"}])
    ref = {"type": "ref/prompt", "name": "surface_review_code"}

    assert complete(raw, "modern", ref, "language", "p").json()["result"]["completion"]["values"] == [
        "perl",
        "php",
        "python",
    ]


def test_a_deny_rule_on_a_resource_refuses_its_subscription_in_either_era(raw, surface_server):
    add_rule("deny", "resource", "docs://readme", name="readme is sealed")
    session_id = raw.initialize()

    refused = raw.legacy(session_id, "resources/subscribe", uri="docs://readme").json()
    ack = listen_ack(raw, ["docs://readme", "docs://logo.png"])

    assert refused["error"]["code"] == -32600
    assert refused["error"]["message"] == "A subscription to docs://readme was denied by policy (readme is sealed)."
    assert McpSession.objects.get(pk=session_id).resource_subscriptions == []
    assert ack["resourceSubscriptions"] == ["docs://logo.png"]


def test_a_subscription_a_rule_denies_later_passes_no_more_updates_and_ends(raw, surface_server):
    session_id = raw.initialize()
    raw.legacy(session_id, "resources/subscribe", uri="docs://readme")
    update = {"type": "resource.updated", "server": surface_server.name, "uri": "docs://readme"}
    before = async_to_sync(subscriptions.session_notifications)(session_id, update)

    add_rule("deny", "resource", "docs://*", name="docs are sealed")
    after = async_to_sync(subscriptions.session_notifications)(session_id, update)

    assert before == [
        {"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "docs://readme"}}
    ]
    assert after == []
    assert McpSession.objects.get(pk=session_id).resource_subscriptions == []
    ended = AuditEvent.objects.get(action="resource.unsubscribed")
    assert ended.data["outcome"] == "ended"
    assert ended.data["error"] == "The subscription to docs://readme was denied by policy (docs are sealed)."


def listen_ack(raw, uris) -> dict:
    from tests.gateway.test_subscriptions import listen_ack as acknowledged

    return acknowledged(raw, {"resourceSubscriptions": uris})


@eras
def test_a_rule_sees_the_uri_in_its_normal_form_whatever_its_spelling(raw, surface_server, era):
    add_rule("deny", "resource", "docs://readme", name="readme is sealed")

    respelled = answer_of(ask(raw, era, "resources/read", uri="DOCS://%52eadme"))
    read = answer_of(ask(raw, era, "resources/read", uri="docs://%6Cogo.png"))

    assert "denied by policy (readme is sealed)" in respelled["error"]["message"]
    assert read["result"]["contents"][0]["uri"] == "docs://logo.png"


def test_it_refuses_a_uri_longer_than_max_uri_bytes_with_invalid_params(raw, surface_server):
    session_id = raw.initialize()
    uri = "docs://" + "x" * 8_200

    for method in ("resources/read", "resources/subscribe"):
        error = raw.legacy(session_id, method, uri=uri).json()["error"]
        assert error["code"] == -32602, method
        assert error["message"] == "The URI is 8207 bytes long; this console takes URIs of at most 8192 bytes"
    ref = {"type": "ref/resource", "uri": uri}
    assert complete(raw, "legacy", ref, "topic", "a").json()["error"]["code"] == -32602


def test_it_reads_a_respelled_uri_from_the_resource_listed_in_normal_form(raw, surface_server):
    response = raw.modern("resources/read", uri="docs://%72eadme")

    assert response.json()["result"]["contents"][0]["text"] == "A server of resources and prompts."


@eras
def test_another_servers_template_never_answers_a_uri_the_first_serves(raw, mcp_url, surface_server, era):
    greedy = make_server("Greedy", tool_prefix="g_", accept_next_listing=True)
    identity = ServerIdentity("2025-11-25", "legacy", {"name": "greedy"}, {"resources": {}}, "")
    sync.apply_catalog(greedy, identity, [], {"resource_templates": [{"uriTemplate": "docs://{name}", "name": "all"}]})
    scoped = Raw(mcp_url, create_token("greedy only", tool_globs=["g_*"])[1])

    try:
        unknown = ask(scoped, era, "resources/read", uri="docs://readme").json()
    finally:
        scoped.client.close()
    read = ask(raw, era, "resources/read", uri="docs://readme").json()

    assert unknown["error"]["data"] == {"uri": "docs://readme"}
    assert read["result"]["contents"][0]["text"] == "A server of resources and prompts."
    reason = ResourceTemplate.objects.get(server=greedy).reason
    assert reason.startswith("uriTemplate 'docs://{name}' matches the resource 'docs://") and "server surface" in reason


async def test_a_listen_stream_passes_on_no_more_updates_of_a_resource_a_rule_denies_later(
    surface_server, client_token
):
    ctx = ClientContext(client_token, revisions.MODERN, "2026-07-28")
    stream = await subscriptions.listen_stream(ctx, 5, {"resourceSubscriptions": ["docs://readme", "docs://logo.png"]})

    async def next_message() -> dict:
        while (chunk := await anext(stream)) == streams.OPENING:
            pass
        return json.loads(chunk.decode().partition("data: ")[2])

    try:
        ack = await next_message()
        await events.resource_updated(surface_server.name, "docs://readme")
        before = await next_message()
        await sync_to_async(add_rule)("deny", "resource", "docs://readme", name="readme is sealed")
        await events.resource_updated(surface_server.name, "docs://readme")
        await events.resource_updated(surface_server.name, "docs://logo.png")
        after = await next_message()
    finally:
        await stream.aclose()
        await session_pool().close_all()

    assert ack["params"]["notifications"]["resourceSubscriptions"] == ["docs://readme", "docs://logo.png"]
    assert before["params"]["uri"] == "docs://readme"
    assert after["method"] == "notifications/resources/updated" and after["params"]["uri"] == "docs://logo.png"
    ended = await AuditEvent.objects.aget(action="resource.unsubscribed")
    assert ended.data["outcome"] == "ended" and "denied by policy (readme is sealed)" in ended.data["error"]
