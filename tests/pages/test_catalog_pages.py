from django.urls import reverse

from approvals.catalog.models import Tool
from tests.fixtures.catalog import make_server, make_tool


def catalog(client, **params):
    return client.get(reverse("catalog"), params).content.decode()


def test_it_lists_active_tools_across_servers_with_exposed_and_upstream_names(operator_client):
    make_tool(make_server("Records"), "lookup_customer", title="Look up a customer")
    make_tool(make_server("Billing", tool_prefix="bill_"), "refund")
    html = catalog(operator_client)
    assert "records_lookup_customer" in html and "Look up a customer" in html
    assert "bill_refund" in html and 'upstream <span class="mono">refund</span>' in html


def test_it_filters_by_server_slug(operator_client):
    make_tool(make_server("Records"), "lookup_customer")
    make_tool(make_server("Billing", tool_prefix="bill_"), "refund")
    html = catalog(operator_client, server="billing")
    assert "bill_refund" in html and "records_lookup_customer" not in html


def test_it_searches_names_titles_and_descriptions(operator_client):
    server = make_server()
    make_tool(server, "lookup_customer", title="Customer card")
    make_tool(server, "delete_record", description="Deletes one invoice for good.")
    make_tool(server, "quote_order")
    assert "records_lookup_customer" in catalog(operator_client, q="customer card")
    found = catalog(operator_client, q="INVOICE")
    assert "records_delete_record" in found and "records_quote_order" not in found
    assert "records_quote_order" in catalog(operator_client, q="quote")


def test_it_lists_rejected_tools_apart_with_their_reasons(operator_client):
    make_tool(make_server(), "bad", status=Tool.Status.REJECTED, reason="x-mcp-header 'Bad Header' has a space")
    html = catalog(operator_client)
    rejected = html.split("Rejected tools")[1]
    assert "records_bad" in rejected and "x-mcp-header &#x27;Bad Header&#x27; has a space" in rejected
    assert "records_bad" not in html.split("Rejected tools")[0]


def test_it_hides_removed_tools_unless_asked(operator_client):
    make_tool(make_server(), "gone", status=Tool.Status.REMOVED)
    assert "records_gone" not in catalog(operator_client)
    assert "1 removed tool hidden" in catalog(operator_client)
    assert "records_gone" in catalog(operator_client, removed="1")


def test_it_marks_annotation_badges_unverified_unless_the_server_is_trusted(operator_client):
    hints = {"readOnlyHint": True, "idempotentHint": True, "openWorldHint": False}
    make_tool(make_server("Untrusted"), "peek", annotations=hints)
    make_tool(make_server("Trusted", trusted=True, tool_prefix="t_"), "peek", annotations=hints)
    untrusted = catalog(operator_client, server="untrusted")
    trusted = catalog(operator_client, server="trusted")
    assert 'read-only <span class="unverified">unverified</span>' in untrusted
    assert 'idempotent <span class="unverified">unverified</span>' in untrusted
    assert "read-only" in trusted and "unverified" not in trusted
    assert "destructive" not in trusted and "open-world" not in trusted


def test_it_shows_the_spec_defaults_when_a_tool_declares_no_hints(operator_client):
    make_tool(make_server(trusted=True), "mystery")
    html = catalog(operator_client)
    assert ">destructive</span>" in html and ">open-world</span>" in html
    assert "read-only" not in html


def test_it_shows_only_the_first_lines_of_a_description_in_the_list(operator_client):
    tool = make_tool(make_server(), "long", description="Line one\nLine two\nLine three\nLine four is the tail")
    assert "Line four" not in catalog(operator_client)
    assert "Line four is the tail" in operator_client.get(reverse("tool", args=[tool.pk])).content.decode()


def test_it_renders_a_tool_page_with_schema_tables_raw_json_and_history(operator_client):
    tool = make_tool(
        make_server(),
        "quote_order",
        inputSchema={
            "type": "object",
            "required": ["sku"],
            "properties": {"sku": {"type": "string", "title": "Stock unit"}},
        },
        outputSchema={"type": "object", "properties": {"total": {"type": "number", "minimum": 0}}},
    )
    tool.changes.create(kind="added", definition=tool.definition, digest=tool.digest, status="active")
    html = operator_client.get(reverse("tool", args=[tool.pk])).content.decode()
    assert "Input schema" in html and "Stock unit" in html and ">required</span>" in html
    assert "Output schema" in html and "<code>minimum</code> 0" in html
    assert "Raw definition (JSON)" in html and "&quot;quote_order&quot;" in html
    assert "First version seen." in html and tool.digest[:12] in html


def test_it_pages_the_active_tools_keeping_the_search_and_server_in_the_links(operator_client):
    records = make_server("Records")
    for number in range(60):
        make_tool(records, f"lookup_{number:02d}", description="Finds a customer.")
    make_tool(make_server("Billing", tool_prefix="bill_"), "lookup_invoice")

    first = operator_client.get(reverse("catalog"), {"q": "lookup", "server": "records"})
    second = operator_client.get(reverse("catalog"), {"q": "lookup", "server": "records", "page": 2})

    assert [tool.exposed_name for tool in first.context["active"]][:2] == ["records_lookup_00", "records_lookup_01"]
    assert len(first.context["active"]) == 50 and len(second.context["active"]) == 10
    assert '?q=lookup&amp;server=records&amp;page=2" rel="next"' in first.content.decode()
    assert "Page 2 of 2, 51–60 of 60" in second.content.decode()


def test_it_pages_a_servers_tools(operator_client):
    records = make_server("Records")
    for number in range(55):
        make_tool(records, f"lookup_{number:02d}")
    html = operator_client.get(reverse("server", args=["records"]), {"page": 2}).content.decode()
    assert "records_lookup_54" in html and "records_lookup_00" not in html and "1–50" not in html
