from datetime import timedelta

from django.utils import timezone

from approvals.catalog.models import Tool, ToolChange
from approvals.display.history import changed_paths, history
from approvals.protocol.json_paths import MAX_DEPTH
from tests.fixtures.catalog import make_server, make_tool

V1 = {
    "name": "lookup",
    "description": "Finds a customer.",
    "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}},
}


def test_it_finds_no_paths_between_equal_definitions():
    assert changed_paths(V1, dict(V1)) == []


def test_it_names_the_nested_paths_that_changed_were_added_or_removed():
    v2 = {
        "name": "lookup",
        "inputSchema": {"type": "object", "properties": {"id": {"type": "integer"}, "email": {"type": "string"}}},
        "annotations": {"readOnlyHint": True},
    }
    assert changed_paths(V1, v2) == [
        "annotations",
        "description",
        "inputSchema.properties.email",
        "inputSchema.properties.id.type",
    ]


def test_it_indexes_into_lists_and_quotes_keys_that_are_not_plain():
    old = {"icons": [{"src": "a"}], "_meta": {"io.example/x": 1}}
    new = {"icons": [{"src": "b"}, {"src": "c"}], "_meta": {"io.example/x": 2}}
    assert changed_paths(old, new) == ['_meta["io.example/x"]', "icons[0].src", "icons[1]"]


def test_it_tells_a_boolean_from_a_number():
    assert changed_paths({"a": 1}, {"a": True}) == ["a"]


def test_it_reports_a_change_of_the_whole_document_by_name():
    assert changed_paths([1], {"a": 1}) == ["(whole definition)"]


def test_it_bounds_the_depth_and_the_number_of_paths():
    deep_old, deep_new = 1, 2
    for _ in range(MAX_DEPTH * 3):
        deep_old, deep_new = {"k": deep_old}, {"k": deep_new}
    assert changed_paths(deep_old, deep_new) == [".".join(["k"] * MAX_DEPTH)]
    assert len(changed_paths({f"k{n}": 1 for n in range(500)}, {}, limit=10)) == 10


def test_it_pairs_each_change_with_the_version_before_it_newest_first(db):
    tool = make_tool(make_server(), "lookup", description="Finds a customer.")
    now = timezone.now()
    v2 = {**V1, "description": "Finds a customer by id."}
    ToolChange.objects.create(
        tool=tool, kind="added", definition=V1, digest="a" * 64, status=Tool.Status.ACTIVE, at=now - timedelta(hours=2)
    )
    ToolChange.objects.create(
        tool=tool,
        kind="changed",
        definition=v2,
        digest="b" * 64,
        status=Tool.Status.ACTIVE,
        at=now - timedelta(hours=1),
    )
    ToolChange.objects.create(
        tool=tool,
        kind="removed",
        definition=v2,
        digest="b" * 64,
        status=Tool.Status.REMOVED,
        reason="no longer listed",
        at=now,
    )
    versions = history(tool)
    assert [v.change.kind for v in versions] == ["removed", "changed", "added"]
    assert [v.paths for v in versions] == [[], ["description"], None]
    assert versions[1].digest_prefix == "b" * 12
