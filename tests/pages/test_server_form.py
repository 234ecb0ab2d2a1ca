import pytest
from django.urls import reverse

from approvals import demo
from approvals.audit.models import AuditEvent
from approvals.catalog.models import Server
from tests.fixtures.catalog import make_server


def add(client, **fields):
    data = {"name": "Records", "transport": "http", "url": "https://records.example/mcp", "enabled": "on", **fields}
    return client.post(reverse("server_add"), {k: v for k, v in data.items() if v is not None})


def edit(client, server, **fields):
    data = {
        "name": server.name,
        "transport": server.transport,
        "url": server.url,
        "command": server.command,
        "tool_prefix": server.tool_prefix,
        "enabled": "on",
        **fields,
    }
    return client.post(reverse("server_edit", args=[server.slug]), {k: v for k, v in data.items() if v is not None})


@pytest.fixture
def no_sync(monkeypatch):
    """Form-only tests: a sync scheduled after commit would reach no real server."""
    monkeypatch.setattr("approvals.tasks.sync_server.delay", lambda pk: None)


def test_it_adds_a_stdio_demo_server_and_syncs_it_after_commit(admin_client, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = add(
            admin_client, name="Demo records", transport="stdio", url="", command=demo.COMMAND_LINE, trusted="on"
        )
    server = Server.objects.get(name="Demo records")
    assert response.status_code == 302 and response["Location"] == reverse("server", args=[server.slug])
    assert server.tool_prefix == "demo_records_" and server.trusted and server.url == ""
    assert server.health == Server.Health.OK, server.last_error
    page = admin_client.get(response["Location"]).content.decode()
    assert "demo_records_lookup_customer" in page


def test_it_gives_a_blank_prefix_the_slug_by_default(admin_client, no_sync):
    add(admin_client, name="Billing API")
    assert Server.objects.get().tool_prefix == "billing_api_"


def test_it_takes_no_prefix_only_when_asked_to(admin_client, no_sync):
    add(admin_client, no_prefix="on")
    assert Server.objects.get().tool_prefix == ""


def test_it_refuses_a_prefix_together_with_no_prefix(admin_client, no_sync):
    response = add(admin_client, tool_prefix="rec_", no_prefix="on")
    assert response.status_code == 200
    assert "not both" in response.content.decode()
    assert not Server.objects.exists()


@pytest.mark.parametrize("prefix", ["rec.", "r c", "réc_", "<b>"])
def test_it_refuses_a_prefix_outside_letters_digits_underscore_and_hyphen(admin_client, no_sync, prefix):
    response = add(admin_client, tool_prefix=prefix)
    assert "Use only letters, digits" in response.content.decode()
    assert not Server.objects.exists()


@pytest.mark.parametrize(
    "url", ["", "ftp://records.example/", "file:///etc/passwd", "javascript:alert(1)", "records.example"]
)
def test_it_refuses_an_http_server_without_an_http_or_https_url(admin_client, no_sync, url):
    response = add(admin_client, url=url)
    assert response.status_code == 200
    assert not Server.objects.exists()


def test_it_refuses_a_stdio_server_without_a_command(admin_client, no_sync):
    response = add(admin_client, transport="stdio", url="", command="   ")
    assert "needs a command" in response.content.decode()


def test_it_reports_a_command_that_a_shell_could_not_split(admin_client, no_sync):
    response = add(admin_client, transport="stdio", command='python -c "print(1)')
    assert "cannot be split" in response.content.decode()
    assert not Server.objects.exists()


@pytest.mark.parametrize("line", ["no colon here", "Bad Name: x", "Host: evil.example", "(paren): x"])
def test_it_refuses_a_header_line_that_is_not_a_valid_name_and_value(admin_client, no_sync, line):
    response = add(admin_client, headers=f"X-Team: blue\n{line}")
    assert response.status_code == 200
    assert response.context["form"].errors["headers"]
    assert not Server.objects.exists()


@pytest.mark.parametrize("line", ["NOEQUALS", "1ABC=x", "WITH SPACE=x"])
def test_it_refuses_an_environment_line_that_is_not_key_equals_value(admin_client, no_sync, line):
    response = add(admin_client, transport="stdio", command="true", env=f"GOOD=1\n{line}")
    assert response.context["form"].errors["env"]


def test_it_stores_headers_and_environment_from_their_lines(admin_client, no_sync):
    add(admin_client, headers="Authorization: Bearer abc\nX-Team:  blue ", env="TOKEN=a=b")
    server = Server.objects.get()
    assert server.headers == {"Authorization": "Bearer abc", "X-Team": "blue"}
    assert server.env == {"TOKEN": "a=b"}


def test_it_refuses_a_second_server_of_the_same_name(admin_client, no_sync):
    make_server("Records")
    response = add(admin_client, name="Records")
    assert "exists already" in response.content.decode()


def test_it_keeps_stored_headers_when_the_edit_leaves_them_blank(admin_client, no_sync):
    server = make_server(headers={"Authorization": "Bearer keep-me"})
    response = edit(admin_client, server, name="Records renamed", trusted="on")
    assert response.status_code == 302
    server.refresh_from_db()
    assert server.name == "Records renamed" and server.trusted
    assert server.headers == {"Authorization": "Bearer keep-me"}


def test_it_replaces_stored_headers_with_new_lines(admin_client, no_sync):
    server = make_server(headers={"Authorization": "Bearer old"})
    edit(admin_client, server, headers="X-Api-Key: new")
    server.refresh_from_db()
    assert server.headers == {"X-Api-Key": "new"}


def test_it_clears_stored_headers_when_asked_to(admin_client, no_sync):
    server = make_server(headers={"Authorization": "Bearer old"}, env={"A": "1"})
    edit(admin_client, server, clear_headers="on")
    server.refresh_from_db()
    assert server.headers == {} and server.env == {"A": "1"}


def test_it_refuses_to_replace_and_clear_at_once(admin_client, no_sync):
    server = make_server(headers={"Authorization": "Bearer old"})
    response = edit(admin_client, server, headers="X-New: 1", clear_headers="on")
    assert "Either replace or clear" in response.content.decode()
    server.refresh_from_db()
    assert server.headers == {"Authorization": "Bearer old"}


def test_it_sets_no_prefix_on_edit_and_shows_it_ticked_afterwards(admin_client, no_sync):
    server = make_server()
    edit(admin_client, server, tool_prefix="", no_prefix="on")
    server.refresh_from_db()
    assert server.tool_prefix == ""
    form = admin_client.get(reverse("server_edit", args=[server.slug])).context["form"]
    assert form["no_prefix"].value() is True


def test_it_schedules_a_sync_when_the_endpoint_changes(admin_client, monkeypatch, django_capture_on_commit_callbacks):
    scheduled = []
    monkeypatch.setattr("approvals.tasks.sync_server.delay", scheduled.append)
    server = make_server()
    with django_capture_on_commit_callbacks(execute=True):
        edit(admin_client, server, url="https://records.example/v2/mcp")
    assert scheduled == [server.pk]


def test_it_records_the_admin_as_the_actor_of_an_added_and_an_edited_server(admin_client, no_sync):
    add(admin_client, headers="Authorization: Bearer abc")
    edit(admin_client, Server.objects.get(), trusted="on")
    events = AuditEvent.objects.filter(action__startswith="server.")
    assert {(e.action, e.actor_type, e.actor_name) for e in events} >= {
        ("server.added", "user", "admin"),
        ("server.changed", "user", "admin"),
    }
    assert "Bearer abc" not in str([e.data for e in events])
