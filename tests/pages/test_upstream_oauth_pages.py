"""The pages of a server that requires OAuth: its form's OAuth part, Connect, and the console's published
Client ID Metadata Document."""

import html
import re

import pytest
from django.urls import reverse

from approvals.audit.models import AuditEvent
from approvals.catalog import sync
from approvals.catalog.models import Server
from approvals.upstream_oauth import registering, server_tokens
from approvals.upstream_oauth.models import UpstreamClient
from tests.fixtures.catalog import make_server
from tests.pages.test_server_form import add, edit
from tests.upstream_oauth.oauth_server import AS, MCP, PRM, ScriptedAuthServer, bearer


@pytest.fixture
def no_sync(monkeypatch):
    monkeypatch.setattr("approvals.tasks.sync_server.delay", lambda pk: None)


def test_the_form_adds_a_client_credentials_server_and_never_shows_its_secret_again(admin_client, no_sync):
    response = add(
        admin_client, url=MCP, oauth="client_credentials", client_id="m2m", client_secret="sec-77", connection="shared"
    )
    server = Server.objects.get(name="Records")
    assert response.status_code == 302 and server.oauth == Server.OAuth.CLIENT_CREDENTIALS
    client = UpstreamClient.objects.get(server=server)
    assert (client.registration, client.client_id, client.client_secret) == ("preregistered", "m2m", "sec-77")
    assert "sec-77" not in str(list(AuditEvent.objects.values_list("data", flat=True)))
    page = admin_client.get(reverse("server_edit", args=[server.slug])).content.decode()
    assert "sec-77" not in page and "m2m" not in page

    edit(admin_client, server, no_resource_indicator="on", connection="per_person", oauth="client_credentials")
    server.refresh_from_db()
    assert (server.resource_indicator, server.connection) == (False, Server.Connection.PER_PERSON)
    assert UpstreamClient.objects.get(server=server).client_secret == "sec-77"


def test_the_form_says_what_an_oauth_setting_lacks(admin_client, no_sync):
    page = add(admin_client, url=MCP, oauth="client_credentials").content.decode()
    assert "Client credentials need the client ID" in page
    page = add(admin_client, url=MCP, client_secret="s", private_key="not a key").content.decode()
    assert "belongs to a client ID" in page and "not an unencrypted PEM private key" in page
    assert not Server.objects.exists()


def test_connect_sends_an_admin_to_the_authorization_server_or_back_with_the_reason(admin_client, monkeypatch):
    ScriptedAuthServer().install(monkeypatch)
    server = make_server("Tracker", url=MCP)
    server_tokens.challenged(server, {"resource_metadata": PRM}, "HTTP 401")
    response = admin_client.post(reverse("server_connect", args=[server.slug]))
    # A page that goes on by itself: a redirect would be bound by the form's CSP form-action.
    assert response.status_code == 200
    (refresh,) = re.findall(r'<meta http-equiv="refresh" content="0;url=([^"]+)">', response.content.decode())
    location = html.unescape(refresh)
    assert location.startswith(f"{AS}/authorize?")
    assert "redirect_uri=http%3A%2F%2Ftestserver%2Foauth%2Fupstream%2Fcallback" in location

    stdio = make_server("Local", transport=Server.Transport.STDIO, url="", command="x", tool_prefix="l_")
    response = admin_client.post(reverse("server_connect", args=[stdio.slug]), follow=True)
    assert b"Could not connect Local" in response.content


def test_only_an_admin_may_connect_a_shared_connection(operator_client, monkeypatch):
    server = make_server("Tracker", url=MCP)
    monkeypatch.setattr("approvals.views.upstream_oauth.start_connect", lambda *a, **k: pytest.fail("no connect"))
    assert operator_client.post(reverse("server_connect", args=[server.slug])).status_code == 403


def test_the_console_publishes_its_client_id_metadata_document(client, db, settings):
    settings.CONSOLE_URL = "https://console.example"
    document = client.get(reverse("upstream_client_metadata")).json()
    assert document["client_id"] == "https://console.example/oauth/upstream/client-metadata.json"
    assert document["redirect_uris"] == ["https://console.example/oauth/upstream/callback"]
    assert document["token_endpoint_auth_method"] == "none"


def test_connect_on_a_client_credentials_server_fetches_a_token_without_a_browser(admin_client, monkeypatch):
    scripted = ScriptedAuthServer().install(monkeypatch)
    monkeypatch.setattr("approvals.catalog.sync.sync_server", lambda server: sync.SyncReport(server.name, ok=True))
    server = make_server("Billing", url=MCP, oauth=Server.OAuth.CLIENT_CREDENTIALS)
    registering.preregister(server, "m2m", "secret")
    response = admin_client.post(reverse("server_connect", args=[server.slug]), follow=True)
    assert b"Could not connect Billing: the token endpoint" in response.content  # the scripted server has none
    scripted.token_answers.append(bearer("cc-1"))
    response = admin_client.post(reverse("server_connect", args=[server.slug]), follow=True)
    assert b"Connected Billing with its client credentials" in response.content
