"""Per-person connections: a person's own upstream accounts on their account page, and whose identity a call uses."""

import html

import pytest

from approvals import roles
from approvals.audit.models import AuditEvent
from approvals.catalog.models import Server
from approvals.live import events
from approvals.tokens.credentials import create_token
from approvals.upstream_oauth.bearer import NeedsAuthorization, bearer_for
from approvals.upstream_oauth.connections import lister
from approvals.upstream_oauth.models import UpstreamAuthorization, UpstreamGrant
from tests.fixtures.calls import pending_call
from tests.fixtures.catalog import make_server, make_tool

pytestmark = pytest.mark.django_db

OAUTH = {"oauth": Server.OAuth.AUTHORIZATION_CODE}
PER_PERSON = {**OAUTH, "connection": Server.Connection.PER_PERSON}


def connection_row(response, server) -> str:
    page = response.content.decode()
    start = page.index(f'data-connection="{server.slug}"')
    return page[start : page.index("</tr>", start)]


def test_it_lists_the_per_person_servers_with_the_persons_own_connection(person):
    ann, page = person("ann", roles.OPERATOR)
    bob, _ = person("bob", roles.OPERATOR)
    files = make_server("Files", url="https://files.example/mcp", **PER_PERSON)
    wiki = make_server("Wiki", url="https://wiki.example/mcp", **PER_PERSON)
    tracker = make_server("Tracker", url="https://tracker.example/mcp", **PER_PERSON)
    shared = make_server("Shared", url="https://shared.example/mcp", **OAUTH)
    UpstreamGrant.objects.create(server=files, user=ann, access_token="a", status=UpstreamGrant.Status.CONNECTED)
    UpstreamGrant.objects.create(server=wiki, user=ann, reason="Its refresh was refused.")
    UpstreamGrant.objects.create(server=tracker, user=bob, access_token="b", status=UpstreamGrant.Status.CONNECTED)

    response = page.get("/account/")

    assert "connected" in connection_row(response, files) and "Reconnect" in connection_row(response, files)
    assert "needs authorization" in connection_row(response, wiki)
    assert "Its refresh was refused." in connection_row(response, wiki)
    assert "not connected" in connection_row(response, tracker)
    assert "Disconnect" not in connection_row(response, tracker)
    assert f'data-connection="{shared.slug}"' not in response.content.decode()


def test_it_shows_no_connections_section_without_a_per_person_server(person):
    _, page = person("ann", roles.OPERATOR)
    make_server("Shared", url="https://shared.example/mcp", **OAUTH)

    assert b"Your upstream connections" not in page.get("/account/").content


def test_it_forgets_only_the_persons_own_connection_and_audits_it(person, monkeypatch):
    closed = []
    monkeypatch.setattr(events, "upstream_retired", lambda name, identity=None: closed.append((name, identity)))
    ann, page = person("ann", roles.OPERATOR)
    bob, _ = person("bob", roles.OPERATOR)
    files = make_server("Files", url="https://files.example/mcp", **PER_PERSON)
    for user in (ann, bob):
        UpstreamGrant.objects.create(server=files, user=user, access_token=f"token-of-{user}", status="connected")

    response = page.post(f"/account/connections/{files.slug}/disconnect/", follow=True)

    assert b"Your connection to Files is forgotten" in response.content
    assert list(UpstreamGrant.objects.values_list("user__username", flat=True)) == ["bob"]
    event = AuditEvent.objects.get(action="upstream_oauth.disconnected")
    assert (event.actor_name, event.server_id) == ("ann", files.pk)
    assert "token-of-ann" not in str(event.data)
    # Every process closes the sessions that carried ann's token, and only those.
    assert closed == [("Files", str(ann.pk))]


def test_it_tells_a_call_with_a_token_acting_as_no_one_that_it_needs_one_its_owner_made():
    files = make_server("Files", url="https://files.example/mcp", **PER_PERSON)

    with pytest.raises(NeedsAuthorization) as needs:
        bearer_for(files, None)

    assert "client token making this call acts as no one there" in needs.value.message
    assert "a token its owner made" in needs.value.message
    assert "account page" not in needs.value.message


def test_it_refuses_to_connect_a_person_to_a_shared_server(person):
    _, page = person("ann", roles.OPERATOR)
    shared = make_server("Shared", url="https://shared.example/mcp", **OAUTH)

    assert page.post(f"/account/connections/{shared.slug}/connect/").status_code == 404
    assert page.get(f"/account/connections/{shared.slug}/connect/").status_code == 405


@pytest.mark.parametrize(
    "fields, owned, shown",
    [
        ({}, True, "the console's shared connection to Files"),
        (OAUTH, True, "the console's shared connection to Files"),
        (PER_PERSON, True, "ann's own connection to Files"),
        (PER_PERSON, False, "none: Files takes each person's own connection, and this client token acts as no one"),
    ],
    ids=["no-oauth", "shared", "per-person", "per-person-without-owner"],
)
def test_it_shows_on_the_queue_and_the_call_page_whose_identity_the_call_uses(person, fields, owned, shown):
    ann, page = person("ann", roles.OPERATOR)
    files = make_server("Files", url="https://files.example/mcp", tool_prefix="files_", **fields)
    token = create_token("agent", user=ann, owner=ann if owned else None)[0]
    call = pending_call(token, make_tool(files, "whoami"))

    assert shown in html.unescape(page.get("/queue/").content.decode())
    assert shown in html.unescape(page.get(f"/calls/{call.pk}/").content.decode())


def test_it_reads_a_per_person_servers_lists_through_the_connection_that_changed_last(person):
    files = make_server("Files", url="https://files.example/mcp", **PER_PERSON)
    shared = make_server("Shared", url="https://shared.example/mcp", **OAUTH)
    assert lister(files) is None
    ann, bob, cy = (person(name, roles.OPERATOR)[0] for name in ("ann", "bob", "cy"))
    for user, status in ((ann, "connected"), (bob, "connected"), (cy, "needs_authorization")):
        UpstreamGrant.objects.create(server=files, user=user, access_token="t", status=status)
    UpstreamGrant.objects.create(server=shared, access_token="t", status="connected")

    assert lister(files) == bob
    assert lister(shared) is None


def test_it_connects_an_admins_own_account_from_a_per_person_servers_page(login, oauth_upstream):
    upstream = oauth_upstream()
    files = make_server("Files", url=upstream.url, **PER_PERSON)
    page = login("admin", username="ada")

    response = page.post(f"/servers/{files.slug}/connect/")

    assert response.status_code == 200
    assert html.unescape(response.content.decode()).count(f"{upstream.base}/authorize?") == 2
    flow = UpstreamAuthorization.objects.get(server=files)
    assert flow.user.username == "ada"
