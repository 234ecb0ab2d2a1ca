"""A server's page lists its resources, resource templates and prompts, and renders their hostile text inert."""

from django.urls import reverse

from approvals.catalog import sync
from approvals.upstream import ServerIdentity
from tests.fixtures.catalog import make_server
from tests.pages.test_hostile_metadata import IMG, SCRIPT, assert_inert

OFFERING = {"resources": {}, "prompts": {}}


def synced(server, **listings):
    identity = ServerIdentity("2025-11-25", "legacy", {}, OFFERING, "")
    return sync.apply_catalog(server, identity, [], listings)


def test_it_lists_a_servers_resources_templates_and_prompts(operator_client):
    server = make_server()
    synced(
        server,
        resources=[
            {"uri": "docs://readme", "name": "readme", "mimeType": "text/markdown", "description": "Start here."}
        ],
        resource_templates=[{"uriTemplate": "notes://{topic}", "name": "notes"}],
        prompts=[{"name": "review", "title": "Review", "arguments": [{"name": "code", "required": True}]}],
    )
    synced(server, resources=[], resource_templates=[{"uriTemplate": "notes://{topic}", "name": "notes"}], prompts=[])

    html = operator_client.get(reverse("server", args=[server.slug])).content.decode()

    for text in ("Resource templates", "notes://{topic}", "records_notes", "and 1 no longer listed"):
        assert text in html, text
    assert "docs://readme" not in html  # removed: counted, not listed


def test_it_shows_a_prompts_arguments_and_a_rejected_resources_reason(operator_client):
    server = make_server()
    other = make_server("Other", url="https://other.example", tool_prefix="other_")
    synced(other, resources=[{"uri": "docs://shared", "name": "shared"}])
    synced(
        server,
        resources=[{"uri": "docs://shared", "name": "shared"}],
        prompts=[{"name": "review", "arguments": [{"name": "code", "required": True}, {"name": "tone"}]}],
    )

    html = operator_client.get(reverse("server", args=[server.slug])).content.decode()

    assert "records_review" in html and "required" in html and "tone" in html
    assert "uri &#x27;docs://shared&#x27; is already served by the server Other" in html


def test_it_renders_hostile_resource_and_prompt_text_escaped(operator_client):
    server = make_server()
    synced(
        server,
        resources=[{"uri": f"docs://{IMG}", "name": IMG, "title": SCRIPT, "description": SCRIPT, "mimeType": IMG}],
        resource_templates=[{"uriTemplate": "x://{a}", "name": SCRIPT, "description": IMG}],
        prompts=[{"name": "p", "description": IMG, "arguments": [{"name": SCRIPT}]}, {"name": IMG}],
    )

    html = operator_client.get(reverse("server", args=[server.slug])).content.decode()

    assert_inert(html)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
