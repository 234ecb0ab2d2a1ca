import json
import shlex
import sys
from pathlib import Path

import pytest

from approvals.actions import servers
from approvals.audit.models import AuditEvent
from approvals.catalog import sync
from approvals.catalog.models import Server, Tool, ToolChange

SCRIPTED = Path(__file__).with_name("scripted_server.py")


def tool(name, **extra):
    return {
        "name": name,
        "description": f"The {name} tool",
        "inputSchema": {"type": "object", "properties": {}},
        **extra,
    }


@pytest.fixture
def scenario(tmp_path):
    """Writes the tools a scripted server lists; the latest server made is the default."""
    latest = {}

    def write(pages, die_on_page=None, name=None):
        path = tmp_path / f"{name or latest['name']}.json"
        latest["name"] = name or latest["name"]
        path.write_text(json.dumps({"pages": pages, "die_on_page": die_on_page}))
        return path

    return write


@pytest.fixture
def scripted(db, scenario):
    def make(name, pages, prefix=None, die_on_page=None):
        path = scenario(pages, die_on_page, name=name)
        return servers.add_server(
            name=name,
            transport=Server.Transport.STDIO,
            tool_prefix=prefix,
            accept_tools=True,
            schedule_sync=False,
            command=shlex.join([sys.executable, str(SCRIPTED), str(path)]),
        )

    return make


def names(server, status=Tool.Status.ACTIVE):
    return sorted(server.tools.filter(status=status).values_list("exposed_name", flat=True))


def test_it_follows_next_cursor_to_the_last_page(scripted):
    server = scripted("Paged", [[tool("a"), tool("b")], [tool("c")], [tool("d")]])
    report = sync.sync_server(server)
    assert report.ok, report.error
    assert names(server) == ["paged_a", "paged_b", "paged_c", "paged_d"]
    server.refresh_from_db()
    assert server.health == Server.Health.OK
    assert server.revision == "2025-06-18"
    assert server.server_info["name"] == "scripted"


def test_it_keeps_the_catalog_when_the_server_dies_in_the_middle_of_a_list(scripted, scenario):
    server = scripted("Flaky", [[tool("a")], [tool("b")]])
    assert sync.sync_server(server).ok
    scenario([[tool("a")], [tool("b")], [tool("c")]], die_on_page=1)
    report = sync.sync_server(server)
    assert not report.ok
    server.refresh_from_db()
    assert server.health == Server.Health.ERROR
    assert server.last_error
    assert names(server) == ["flaky_a", "flaky_b"]


def test_it_rejects_a_tool_with_a_bad_x_mcp_header_and_says_why(scripted):
    bad = tool(
        "bad",
        inputSchema={"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Bad Header"}}},
    )
    server = scripted("Headers", [[tool("good"), bad]])
    assert sync.sync_server(server).ok
    rejected = server.tools.get(upstream_name="bad")
    assert rejected.status == Tool.Status.REJECTED
    assert "x-mcp-header" in rejected.reason
    assert names(server) == ["headers_good"]


def test_it_rejects_a_tool_whose_input_schema_is_invalid(scripted):
    bad = tool("bad", inputSchema={"type": "object", "properties": {"n": {"type": "integer", "minimum": "zero"}}})
    server = scripted("Schemas", [[bad]])
    sync.sync_server(server)
    rejected = server.tools.get(upstream_name="bad")
    assert rejected.status == Tool.Status.REJECTED
    assert "minimum" in rejected.reason


def test_it_rejects_a_tool_whose_pattern_needs_a_backtracking_matcher_and_says_why(scripted):
    lookahead = {"type": "string", "pattern": "^(?=.*[0-9])[a-z0-9]+$"}
    bad = tool("bad", inputSchema={"type": "object", "properties": {"code": lookahead}})
    server = scripted("Patterns", [[bad]])
    sync.sync_server(server)
    rejected = server.tools.get(upstream_name="bad")
    assert rejected.status == Tool.Status.REJECTED
    assert rejected.reason.startswith("inputSchema is not a usable JSON Schema: pattern '^(?=.*[0-9])[a-z0-9]+$'")
    assert "no backreferences, lookahead or lookbehind" in rejected.reason


def test_it_rejects_the_later_of_two_tools_with_the_same_exposed_name(scripted):
    first = scripted("First", [[tool("search")]], prefix="")
    second = scripted("Second", [[tool("search"), tool("fetch")]], prefix="")
    sync.sync_server(first)
    sync.sync_server(second)
    assert names(first) == ["search"]
    assert names(second) == ["fetch"]
    later = second.tools.get(upstream_name="search")
    assert later.status == Tool.Status.REJECTED
    assert "already used" in later.reason
    sync.sync_server(first)
    assert names(first) == ["search"], "a resync must not let the newcomer take the name"


def test_it_keeps_the_name_of_the_consoles_own_tool_from_upstream_tools(scripted):
    server = scripted("Bare", [[tool("approval_prompt"), tool("search")]], prefix="")
    sync.sync_server(server)
    assert names(server) == ["search"]
    squatter = server.tools.get(upstream_name="approval_prompt")
    assert squatter.status == Tool.Status.REJECTED
    assert "the console's own tool" in squatter.reason


def test_it_rejects_names_that_llm_apis_would_refuse(scripted):
    server = scripted("Names", [[tool("dotted.name"), tool("x" * 70)]])
    sync.sync_server(server)
    assert names(server) == ["names_dotted_name"]
    long_one = server.tools.get(upstream_name="x" * 70)
    assert long_one.status == Tool.Status.REJECTED
    assert "1-64 characters" in long_one.reason


def test_it_records_a_history_row_when_a_definition_changes(scripted, scenario):
    server = scripted("Changing", [[tool("a"), tool("b")]])
    sync.sync_server(server)
    scenario([[tool("a", description="Now it deletes things", annotations={"destructiveHint": True})]])
    report = sync.sync_server(server)
    assert report.changed == ["changing_a"]
    assert report.removed == ["changing_b"]
    a = server.tools.get(upstream_name="a")
    kinds = list(a.changes.order_by("id").values_list("kind", flat=True))
    assert kinds == [ToolChange.Kind.ADDED, ToolChange.Kind.CHANGED]
    latest = a.changes.order_by("-id").first()
    assert latest.definition["description"] == "Now it deletes things"
    assert latest.previous_digest and latest.previous_digest != latest.digest == a.digest
    b = server.tools.get(upstream_name="b")
    assert b.status == Tool.Status.REMOVED


def test_it_writes_no_history_when_nothing_changed(scripted):
    server = scripted("Steady", [[tool("a")]])
    sync.sync_server(server)
    sync.sync_server(server)
    assert ToolChange.objects.filter(tool__server=server).count() == 1


def test_it_brings_back_a_removed_tool_that_is_listed_again(scripted, scenario):
    server = scripted("Returning", [[tool("a")]])
    sync.sync_server(server)
    scenario([[]])
    sync.sync_server(server)
    scenario([[tool("a")]])
    report = sync.sync_server(server)
    assert report.added == ["returning_a"]
    assert names(server) == ["returning_a"]


def test_it_marks_a_server_that_cannot_start_as_failing(db):
    server = servers.add_server(
        name="Missing", transport=Server.Transport.STDIO, command="/nonexistent/mcp-server", schedule_sync=False
    )
    report = sync.sync_server(server)
    assert not report.ok
    server.refresh_from_db()
    assert server.health == Server.Health.ERROR
    assert server.last_error


def test_it_audits_and_announces_a_changed_catalog(scripted, scenario, django_capture_on_commit_callbacks):
    server = scripted("Announced", [[tool("a")]])
    with django_capture_on_commit_callbacks() as callbacks:
        sync.sync_server(server)
    assert callbacks, "a changed catalog is announced after commit"
    event = AuditEvent.objects.get(action="catalog.changed", server_id=server.pk)
    assert event.data["added"] == ["announced_a"]
    with django_capture_on_commit_callbacks() as callbacks:
        sync.sync_server(server)
    assert not callbacks
    assert AuditEvent.objects.filter(action="catalog.changed").count() == 1
