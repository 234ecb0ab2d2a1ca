from datetime import timedelta
from types import SimpleNamespace

from django.urls import reverse
from django.utils import timezone

from approvals.catalog.models import Server, Tool
from approvals.catalog.sync import SyncReport
from tests.fixtures.catalog import make_server, make_tool


def messages_of(response):
    return [str(m) for m in response.context["messages"]]


def test_it_lists_servers_with_health_revision_sync_time_and_tool_counts(operator_client):
    server = make_server(
        revision="2025-06-18",
        health=Server.Health.ERROR,
        last_error="connection refused",
        last_sync_at=timezone.now() - timedelta(minutes=7),
        trusted=True,
    )
    make_tool(server, "a")
    make_tool(server, "b")
    make_tool(server, "c", status=Tool.Status.REJECTED)
    html = operator_client.get(reverse("servers")).content.decode()
    for text in (
        "Records",
        "https://records.example/mcp",
        "2025-06-18",
        "Failing",
        "connection refused",
        "7\xa0minutes ago",
        "2 active",
        "1 rejected",
        ">trusted<",
        ">enabled<",
    ):
        assert text in html, text


def test_it_shows_a_stdio_server_by_its_command(operator_client):
    make_server("Local", transport=Server.Transport.STDIO, url="", command="python -m local_server --fast")
    assert "python -m local_server --fast" in operator_client.get(reverse("servers")).content.decode()


def test_it_shows_server_identity_capabilities_and_tools_by_status(operator_client):
    server = make_server(
        revision="2025-11-25",
        server_info={"name": "records-srv", "version": "1.4.2", "title": "Records Service"},
        capabilities={"tools": {"listChanged": True}, "logging": {}},
        instructions="Call lookup first.",
    )
    make_tool(server, "lookup")
    make_tool(server, "bad", status=Tool.Status.REJECTED, reason="name too long")
    make_tool(server, "old", status=Tool.Status.REMOVED)
    html = operator_client.get(reverse("server", args=[server.slug])).content.decode()
    for text in (
        "2025-11-25",
        "records-srv",
        "1.4.2",
        "Records Service",
        "listChanged",
        "logging",
        "Call lookup first.",
        "records_lookup",
        "name too long",
        "Removed tools",
        "records_old",
    ):
        assert text in html, text


def test_it_folds_long_instructions(operator_client):
    server = make_server(instructions="Read carefully.\n" * 100)
    html = operator_client.get(reverse("server", args=[server.slug])).content.decode()
    assert "<details><summary>Show 1600 characters of instructions</summary>" in html


def test_it_reports_a_sync_with_the_tool_count_and_revision(admin_client, monkeypatch):
    server = make_server()

    def sync(target):
        make_tool(target, "fresh")
        Server.objects.filter(pk=target.pk).update(revision="2025-11-25")
        return SyncReport(target.name, ok=True, added=["records_fresh"])

    monkeypatch.setattr("approvals.catalog.sync.sync_server", sync)
    response = admin_client.post(reverse("server_sync", args=[server.slug]), follow=True)
    assert messages_of(response) == ["Synced Records: 1 added; 1 active tools, revision 2025-11-25."]


def test_it_reports_a_failed_sync_with_its_error(admin_client, monkeypatch):
    server = make_server()
    monkeypatch.setattr(
        "approvals.catalog.sync.sync_server", lambda s: SyncReport(s.name, ok=False, error="HTTP 401 from upstream")
    )
    response = admin_client.post(reverse("server_sync", args=[server.slug]), follow=True)
    assert messages_of(response) == ["Could not sync Records: HTTP 401 from upstream"]
    assert 'class="message error"' in response.content.decode()


def test_it_does_not_sync_a_disabled_server(admin_client, monkeypatch):
    server = make_server(enabled=False)
    monkeypatch.setattr("approvals.catalog.sync.sync_server", lambda s: (_ for _ in ()).throw(AssertionError("synced")))
    response = admin_client.post(reverse("server_sync", args=[server.slug]), follow=True)
    assert "is disabled" in messages_of(response)[0]


def test_it_reports_a_connection_test_without_touching_the_catalog(admin_client, monkeypatch):
    server = make_server()
    identity = SimpleNamespace(revision="2025-06-18")
    monkeypatch.setattr("approvals.catalog.sync.test_connection", lambda s: (identity, 4, ""))
    response = admin_client.post(reverse("server_test", args=[server.slug]), follow=True)
    assert messages_of(response) == ["Reached Records: 4 tools listed, revision 2025-06-18."]
    assert not server.tools.exists()


def test_it_reports_a_failed_connection_test(admin_client, monkeypatch):
    server = make_server()
    monkeypatch.setattr("approvals.catalog.sync.test_connection", lambda s: (None, 0, "connection refused"))
    response = admin_client.post(reverse("server_test", args=[server.slug]), follow=True)
    assert messages_of(response) == ["Could not reach Records: connection refused"]


def test_it_answers_404_for_an_unknown_server(operator_client, db):
    assert operator_client.get(reverse("server", args=["ghost"])).status_code == 404
