"""A server's resources, resource templates and prompts, kept at sync, and the routes no two servers may share."""

from approvals.audit.models import AuditEvent
from approvals.catalog import sync
from approvals.catalog.models import Server
from approvals.catalog.surface_models import Prompt, Resource, ResourceTemplate, SurfaceItem
from approvals.upstream import ServerIdentity
from tests.fixtures.catalog import SURFACE_COMMAND, add_synced_server, make_server

ACTIVE, REJECTED, REMOVED = SurfaceItem.Status.ACTIVE, SurfaceItem.Status.REJECTED, SurfaceItem.Status.REMOVED
# These are about routes and listings; review is tests/catalog/test_surface_review.py's.
ACCEPT_CHANGES = Server.Changes.ACCEPT
OFFERING = {"tools": {}, "resources": {}, "prompts": {}}


def identity(capabilities=None):
    return ServerIdentity("2025-11-25", "legacy", {"name": "x"}, OFFERING if capabilities is None else capabilities, "")


def listings(resources=(), templates=(), prompts=()):
    return {"resources": list(resources), "resource_templates": list(templates), "prompts": list(prompts)}


def apply(server, capabilities=None, **kinds):
    return sync.apply_catalog(server, identity(capabilities), [], listings(**kinds))


def test_it_stores_every_resource_template_and_prompt_of_a_real_server(surface_server):
    resources = {r.uri: r for r in surface_server.resources.all()}
    assert len(resources) == 28  # listed in pages of ten
    readme = resources["docs://readme"]
    assert (readme.status, readme.exposed_name, readme.definition["title"]) == (ACTIVE, "surface_readme", "Read me")
    assert len(readme.digest) == 64
    template = surface_server.resourcetemplates.get()
    assert (template.uri, template.exposed_name) == ("notes://by-topic/{topic}", "surface_notes-by-topic")
    prompts = {p.exposed_name: p for p in surface_server.prompts.all()}
    assert set(prompts) == {"surface_review_code", "surface_greeting"}
    assert [a["name"] for a in prompts["surface_review_code"].arguments] == ["code", "language"]
    event = AuditEvent.objects.filter(action="catalog.changed").latest("seq")
    assert len(event.data["resources"]["added"]) == 28
    assert sorted(event.data["prompts"]["added"]) == ["surface_greeting", "surface_review_code"]


def test_it_rejects_a_uri_another_server_serves_and_says_which(surface_server):
    second = add_synced_server("surface-two", transport="stdio", command=SURFACE_COMMAND)

    readme = second.resources.get(uri="docs://readme")
    assert readme.status == REJECTED
    assert readme.reason == "uri 'docs://readme' is already served by the server surface"
    assert second.resourcetemplates.get().status == REJECTED
    # Prompts are told apart by their prefixed names, so both servers' prompts stay.
    assert set(second.prompts.filter(status=ACTIVE).values_list("exposed_name", flat=True)) == {
        "surface_two_review_code",
        "surface_two_greeting",
    }
    assert surface_server.resources.get(uri="docs://readme").status == ACTIVE


def test_it_rejects_the_later_of_two_prompts_with_one_exposed_name(db):
    first = make_server("One", tool_prefix="", changes=ACCEPT_CHANGES)
    second = make_server("Two", tool_prefix="", url="https://two.example", changes=ACCEPT_CHANGES)
    apply(first, prompts=[{"name": "summarise"}])
    apply(second, prompts=[{"name": "summarise"}, {"name": "bad name!"}])

    assert Prompt.objects.get(server=first).status == ACTIVE
    taken = Prompt.objects.get(server=second, upstream_name="summarise")
    assert (taken.status, taken.reason) == (REJECTED, "exposed name 'summarise' is already served by the server One")
    assert "is not 1-64 characters" in Prompt.objects.get(server=second, upstream_name="bad name!").reason


def test_it_rejects_malformed_entries_and_leaves_out_what_it_cannot_keep(db):
    server = make_server(changes=ACCEPT_CHANGES)
    report = apply(
        server,
        resources=[
            {"name": "no uri"},
            {"uri": "a://x"},
            {"uri": "a://y", "name": "y"},
            {"uri": "a://y", "name": "again"},
        ],
        templates=[{"uriTemplate": "a://{broken", "name": "t"}, {"uriTemplate": "a://" + "x" * 3000, "name": "long"}],
        prompts=[{"name": "p", "arguments": [{"name": "a", "required": "yes"}]}, {"name": "q", "arguments": "none"}],
    )

    assert Resource.objects.get(uri="a://x").reason == "it has no name"
    assert Resource.objects.get(uri="a://y").status == ACTIVE
    assert "'a://y' is listed twice" in report.surface["resources"]["rejected"]
    assert "an entry has no uri string" in report.surface["resources"]["rejected"]
    assert "unmatched brace" in ResourceTemplate.objects.get().reason
    assert any("longer than 2000 bytes" in r for r in report.surface["resource_templates"]["rejected"])
    assert "'required'" in Prompt.objects.get(upstream_name="p").reason
    assert Prompt.objects.get(upstream_name="q").reason == "its arguments are not a list"


def test_it_removes_what_is_no_longer_listed_and_what_the_capabilities_stop_offering(db):
    server = make_server(changes=ACCEPT_CHANGES)
    apply(server, resources=[{"uri": "a://1", "name": "one"}, {"uri": "a://2", "name": "two"}], prompts=[{"name": "p"}])
    report = apply(server, resources=[{"uri": "a://1", "name": "one, renamed"}], prompts=[{"name": "p"}])

    assert Resource.objects.get(uri="a://2").status == REMOVED
    assert report.surface["resources"] == {"changed": ["a://1"], "removed": ["a://2"]}
    assert "prompts" not in report.surface

    apply(server, capabilities={"tools": {}}, resources=[{"uri": "a://1", "name": "one"}], prompts=[{"name": "p"}])
    assert set(Resource.objects.values_list("status", flat=True)) == {REMOVED}
    assert Prompt.objects.get().status == REMOVED


def test_a_removed_uri_is_free_for_another_server(db):
    first = make_server("One", changes=ACCEPT_CHANGES)
    second = make_server("Two", url="https://two.example", tool_prefix="two_", changes=ACCEPT_CHANGES)
    apply(first, resources=[{"uri": "a://shared", "name": "s"}])
    apply(first, resources=[])
    apply(second, resources=[{"uri": "a://shared", "name": "s"}])

    assert Resource.objects.get(server=second).status == ACTIVE
