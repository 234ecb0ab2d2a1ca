from approvals import roles
from approvals.actions import servers
from approvals.audit.chain import Actor
from approvals.audit.models import AuditEvent
from tests.fixtures.people import make_user


def test_it_audits_a_new_server_without_its_secrets(db):
    server = servers.add_server(
        name="Search",
        transport="http",
        url="https://search.example/mcp",
        headers={"Authorization": "Bearer s3cret"},
        schedule_sync=False,
    )
    event = AuditEvent.objects.get(action="server.added", server_id=server.pk)
    assert event.data["url"] == "https://search.example/mcp"
    assert event.data["headers"] == ["Authorization"]
    assert "s3cret" not in str(event.data)


def test_it_audits_who_changed_what_and_when_trust_was_granted(db):
    admin = make_user("root", roles.ADMIN)
    server = servers.add_server(name="Search", transport="http", url="https://a.example/mcp", schedule_sync=False)
    servers.update_server(
        server, Actor.user(admin), url="https://b.example/mcp", trusted=True, headers={"X-Key": "hidden-value"}
    )
    changed = AuditEvent.objects.get(action="server.changed")
    assert changed.actor_name == "root"
    assert changed.data["before"] == {"url": "https://a.example/mcp", "trusted": False}
    assert changed.data["after"] == {"url": "https://b.example/mcp", "trusted": True}
    assert changed.data["headers"] == ["X-Key"]
    assert "hidden-value" not in str(changed.data)
    assert AuditEvent.objects.filter(action="server.trusted", actor_name="root").count() == 1


def test_it_audits_nothing_when_nothing_changed(db):
    server = servers.add_server(name="Same", transport="http", url="https://a.example/mcp", schedule_sync=False)
    servers.update_server(server, url="https://a.example/mcp")
    assert not AuditEvent.objects.filter(action="server.changed").exists()
