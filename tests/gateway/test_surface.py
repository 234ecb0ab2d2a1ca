"""Resources, templates, prompts and completion through /mcp, in both eras, against a server built with the SDK."""

import base64

import pytest

from approvals.audit.models import AuditEvent
from approvals.catalog.models import Server
from approvals.catalog.surface_models import Prompt, Resource
from approvals.tokens.credentials import create_token
from tests.fixtures.catalog import make_server
from tests.gateway.conftest import Raw

eras = pytest.mark.parametrize("era", ["modern", "legacy"])


def ask(raw: Raw, era: str, method: str, **params):
    """The response to one request in the era's own terms; legacy requests run in a fresh session."""
    if era == "modern":
        return raw.modern(method, **params)
    return raw.legacy(raw.initialize(), method, **params)


def result_of(response) -> dict:
    assert response.status_code == 200, response.text
    body = response.json()
    assert "result" in body, body
    return body["result"]


def every_page(raw, era, method, key) -> list[dict]:
    items, cursor = [], None
    while True:
        result = result_of(ask(raw, era, method, **({"cursor": cursor} if cursor else {})))
        items += result[key]
        cursor = result.get("nextCursor")
        if cursor is None:
            return items


@eras
def test_it_advertises_resources_prompts_completions_and_subscriptions_only_once_a_server_offers_them(raw, db, era):
    def offered():
        if era == "modern":
            return result_of(raw.modern("server/discover"))["capabilities"]
        params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
        return result_of(raw.post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}))[
            "capabilities"
        ]

    # Tasks are the console's own, offered whatever the servers offer: the era's capability or extension.
    always = {"tools", "logging", "extensions" if era == "modern" else "tasks"}
    assert set(offered()) == always
    make_server(capabilities={"resources": {}, "prompts": {}})
    plain = offered()
    make_server("Watched", capabilities={"resources": {"subscribe": True}}, url="https://watched.example")
    assert set(offered()) == always | {"resources", "prompts"}
    make_server("Other", capabilities={"completions": {}}, url="https://other.example", enabled=False)
    assert "completions" not in offered()
    # Subscriptions only while some server offers them; the console announces every list's changes itself.
    assert plain["resources"] == {"listChanged": True} and plain["prompts"] == {"listChanged": True}
    assert offered()["resources"] == {"listChanged": True, "subscribe": True}


@eras
def test_it_lists_every_resource_a_page_at_a_time_with_an_opaque_cursor(raw, surface_server, settings, era):
    settings.MCP_TOOLS_PAGE_SIZE = 10

    resources = every_page(raw, era, "resources/list", "resources")

    uris = [resource["uri"] for resource in resources]
    assert uris == sorted(Resource.objects.values_list("uri", flat=True)) and len(uris) == 28
    readme = next(r for r in resources if r["uri"] == "docs://readme")
    assert readme["name"] == "surface_readme" and readme["title"] == "Read me"


@eras
def test_it_lists_templates_and_prompts_under_their_exposed_names(raw, surface_server, era):
    templates = result_of(ask(raw, era, "resources/templates/list"))["resourceTemplates"]
    prompts = result_of(ask(raw, era, "prompts/list"))["prompts"]

    assert [t["uriTemplate"] for t in templates] == ["notes://by-topic/{topic}"]
    assert [p["name"] for p in prompts] == ["surface_greeting", "surface_review_code"]


@eras
def test_it_reads_text_and_blob_contents_intact_and_templated_uris_too(raw, surface_server, era):
    text = result_of(ask(raw, era, "resources/read", uri="docs://readme"))
    blob = result_of(ask(raw, era, "resources/read", uri="docs://logo.png"))
    templated = result_of(ask(raw, era, "resources/read", uri="notes://by-topic/gamma"))

    assert text["contents"] == [
        {"uri": "docs://readme", "mimeType": "text/plain", "text": "A server of resources and prompts."}
    ]
    assert base64.b64decode(blob["contents"][0]["blob"]) == bytes(range(256))
    assert templated["contents"][0]["text"] == "notes about gamma"
    if era == "modern":
        assert text["resultType"] == "complete"
        assert text["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "mcp-approval-console"


@eras
def test_it_gets_a_prompt_and_completes_its_argument_and_a_template_variable(raw, surface_server, era):
    prompt = result_of(ask(raw, era, "prompts/get", name="surface_review_code", arguments={"code": "x = 1"}))
    languages = result_of(
        ask(
            raw,
            era,
            "completion/complete",
            ref={"type": "ref/prompt", "name": "surface_review_code"},
            argument={"name": "language", "value": "p"},
        )
    )
    topics = result_of(
        ask(
            raw,
            era,
            "completion/complete",
            ref={"type": "ref/resource", "uri": "notes://by-topic/{topic}"},
            argument={"name": "topic", "value": "a"},
        )
    )

    assert prompt["messages"][0]["content"]["text"] == "Please review this python code:\nx = 1"
    assert languages["completion"]["values"] == ["perl", "php", "python"]
    assert topics["completion"]["values"] == ["alpha"]


@eras
def test_it_answers_an_unknown_uri_with_the_eras_resource_not_found_error(raw, surface_server, era):
    response = ask(raw, era, "resources/read", uri="docs://nowhere")

    error = response.json()["error"]
    assert error["code"] == (-32602 if era == "modern" else -32002)
    assert error["data"] == {"uri": "docs://nowhere"}
    assert response.status_code == (400 if era == "modern" else 200)


@eras
@pytest.mark.parametrize(
    "method, params, message",
    [
        ("prompts/get", {"name": "surface_review_code", "arguments": {}}, "missing required code"),
        ("prompts/get", {"name": "surface_review_code", "arguments": {"code": 1}}, "values are strings"),
        ("prompts/get", {"name": "surface_review_code", "arguments": {"code": "x", "tone": "kind"}}, "unknown tone"),
        ("prompts/get", {"name": "surface_nothing"}, "Unknown prompt: surface_nothing"),
        ("completion/complete", {"ref": {"type": "ref/tool"}, "argument": {"name": "a", "value": ""}}, "ref.type"),
        (
            "completion/complete",
            {"ref": {"type": "ref/prompt", "name": "surface_greeting"}, "argument": {"name": "a", "value": ""}},
            "no argument 'a'",
        ),
        ("completion/complete", {"ref": {"type": "ref/prompt", "name": "surface_review_code"}}, "'argument' object"),
    ],
)
def test_it_refuses_bad_input_as_invalid_params(raw, surface_server, era, method, params, message):
    response = ask(raw, era, method, **params)

    assert response.status_code == (400 if era == "modern" else 200)
    error = response.json()["error"]
    assert error["code"] == -32602 and message in error["message"]


@pytest.mark.parametrize("method, params", [("prompts/get", {"name": 7}), ("resources/read", {"uri": ["docs://x"]})])
def test_it_refuses_a_name_or_uri_that_is_not_a_string(raw, surface_server, method, params):
    legacy = raw.legacy(raw.initialize(), method, **params).json()["error"]
    # A 2026-07-28 client mirrors the name in Mcp-Name, and a value no header can carry disagrees with it first.
    modern = raw.modern(method, **params)

    assert legacy["code"] == -32602 and "needs a string" in legacy["message"]
    assert (modern.status_code, modern.json()["error"]["code"]) == (400, -32020)


@eras
def test_a_token_scoped_away_from_a_server_sees_none_of_its_resources_or_prompts(mcp_url, surface_server, era):
    other = make_server("Other", url="https://other.example", tool_prefix="other_")
    Prompt.objects.create(server=other, upstream_name="p", exposed_name="other_p", definition={"name": "p"}, digest="0")
    narrow = Raw(mcp_url, create_token("narrow", ["other_*"])[1])

    assert result_of(ask(narrow, era, "resources/list"))["resources"] == []
    assert result_of(ask(narrow, era, "resources/templates/list"))["resourceTemplates"] == []
    assert [p["name"] for p in result_of(ask(narrow, era, "prompts/list"))["prompts"]] == ["other_p"]
    assert ask(narrow, era, "resources/read", uri="docs://readme").json()["error"]["data"] == {"uri": "docs://readme"}
    assert "Unknown prompt" in ask(narrow, era, "prompts/get", name="surface_greeting").json()["error"]["message"]


@eras
def test_it_answers_a_dead_upstream_with_a_protocol_error_not_a_500(raw, db, era):
    dead = make_server(
        "Dead", transport=Server.Transport.STDIO, command="false", url="", capabilities={"resources": {}}
    )
    Resource.objects.create(
        server=dead, uri="dead://x", upstream_name="x", exposed_name="records_x", definition={}, digest="0"
    )

    response = ask(raw, era, "resources/read", uri="dead://x")

    assert response.status_code == 200
    error = response.json()["error"]
    assert error["code"] == -32603 and "The upstream server Dead failed to answer resources/read" in error["message"]


def test_it_audits_each_read_prompt_and_completion_with_the_token_and_server(raw, surface_server):
    raw.modern("resources/read", uri="docs://readme")
    raw.modern("resources/read", uri="docs://nowhere")
    raw.modern("prompts/get", name="surface_greeting")
    raw.modern(
        "completion/complete",
        ref={"type": "ref/prompt", "name": "surface_review_code"},
        argument={"name": "language", "value": "r"},
    )

    reads = list(AuditEvent.objects.filter(action="resource.read").order_by("seq"))
    assert [(e.data["uri"], e.data["outcome"], e.server_id) for e in reads] == [
        ("docs://readme", "answered", surface_server.pk),
        ("docs://nowhere", "unknown", None),
    ]
    assert all(e.token_id is not None and e.actor_type == "client" for e in reads)
    got = AuditEvent.objects.get(action="prompt.got")
    assert (got.data["prompt"], got.server_id) == ("surface_greeting", surface_server.pk)
    asked = AuditEvent.objects.get(action="completion.asked")
    assert asked.data["ref"] == "surface_review_code" and asked.data["argument"] == "language"


@eras
def test_it_passes_an_upstreams_refusal_on_as_the_eras_not_found_error(raw, surface_server, era):
    Resource.objects.create(
        server=surface_server,
        uri="docs://gone",
        upstream_name="gone",
        exposed_name="surface_gone",
        definition={},
        digest="0",
    )

    error = ask(raw, era, "resources/read", uri="docs://gone").json()["error"]

    assert error["code"] == (-32602 if era == "modern" else -32002)
    assert error["data"] == {"uri": "docs://gone"} and "docs://gone" in error["message"]


def test_it_fails_a_read_larger_than_the_result_cap_without_passing_any_of_it_on(raw, surface_server, settings):
    settings.MAX_RESULT_BYTES = 300

    response = raw.modern("resources/read", uri="docs://logo.png")

    error = response.json()["error"]
    assert error["code"] == -32603 and "more than the 300 allowed" in error["message"]
    assert "blob" not in response.text


def test_it_keeps_a_bounded_part_of_a_long_unknown_uri_in_the_audit_log(raw, surface_server):
    uri = "docs://" + "x" * 8_000

    # Legacy: a 2026-07-28 request would mirror the URI in a header, and no server takes a header this long.
    response = raw.legacy(raw.initialize(), "resources/read", uri=uri)

    assert response.json()["error"]["code"] == -32002
    event = AuditEvent.objects.get(action="resource.read")
    assert event.data["uri"].startswith("docs://xxx") and len(event.data["uri"]) == 2001
