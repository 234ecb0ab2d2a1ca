"""tools/list: each token sees the active tools it may use, a page at a time; others do not exist for it."""

import pytest

from approvals.audit.models import AuditEvent
from approvals.catalog.models import Server, Tool
from approvals.tokens.credentials import create_token
from tests.gateway.conftest import Raw


def listed_names(response) -> list[str]:
    return [tool["name"] for tool in response.json()["result"]["tools"]]


@pytest.fixture
def narrow(mcp_url, demo_server):
    """A client whose token may use only the demo server's read-only lookups."""
    return Raw(mcp_url, create_token("narrow", ["demo_lookup_*", "demo_search_*"])[1])


def test_it_leaves_out_the_tools_outside_a_tokens_scope(narrow):
    assert listed_names(narrow.modern("tools/list")) == ["demo_lookup_customer", "demo_search_orders"]


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_it_answers_a_call_to_a_tool_outside_the_scope_as_an_unknown_tool(narrow, era):
    if era == "modern":
        response = narrow.modern("tools/call", name="demo_delete_record", arguments={})
    else:
        response = narrow.legacy(narrow.initialize(), "tools/call", name="demo_delete_record", arguments={})

    assert response.status_code == (400 if era == "modern" else 200)
    assert response.json()["error"] == {"code": -32602, "message": "Unknown tool: demo_delete_record"}


def test_it_exposes_the_upstream_definition_with_only_the_name_and_task_support_changed(raw, demo_server):
    tool = Tool.objects.get(exposed_name="demo_quote_order")

    listed = next(t for t in raw.modern("tools/list").json()["result"]["tools"] if t["name"] == "demo_quote_order")

    # The console can hold any call as a task, whatever the upstream server can do.
    assert listed == {**tool.definition, "name": "demo_quote_order", "execution": {"taskSupport": "optional"}}
    assert tool.definition["name"] == "quote_order"


def test_it_pages_through_the_tools_in_name_order_with_an_opaque_cursor(raw, demo_server, settings):
    settings.MCP_TOOLS_PAGE_SIZE = 2
    upstream = Tool.objects.filter(status=Tool.Status.ACTIVE).values_list("exposed_name", flat=True)
    # The console's own approval_prompt takes its place among them.
    every = sorted([*upstream, "approval_prompt"])

    pages, cursor = [], None
    while True:
        result = raw.modern("tools/list", **({"cursor": cursor} if cursor else {})).json()["result"]
        pages.append([tool["name"] for tool in result["tools"]])
        cursor = result.get("nextCursor")
        if cursor is None:
            break
        assert "demo_" not in cursor

    assert all(len(page) <= 2 for page in pages)
    assert [name for page in pages for name in page] == every


def test_it_refuses_a_cursor_it_did_not_make(raw, demo_server):
    response = raw.modern("tools/list", cursor="demo_lookup_customer")

    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32602


def test_it_leaves_out_the_tools_of_a_disabled_server(raw, demo_server):
    Server.objects.filter(pk=demo_server.pk).update(enabled=False)

    assert listed_names(raw.modern("tools/list")) == ["approval_prompt"]


def test_it_records_each_listing_in_the_audit_log_as_the_clients_doing(narrow):
    narrow.modern("tools/list")

    event = AuditEvent.objects.get(action="tools.listed")
    assert (event.actor_type, event.actor_name) == ("client", "narrow")
    assert event.data["tools"] == ["demo_lookup_customer", "demo_search_orders"]
    assert event.data["era"] == "modern"
