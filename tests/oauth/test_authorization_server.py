"""The console as an OAuth 2.1 authorization server: discovery, registration, consent, codes and tokens."""

import json

import pytest
from django.test import override_settings
from oauth2_provider.models import Application

from approvals import roles
from approvals.actions.revocation import revoke_token
from approvals.audit.models import AuditEvent
from approvals.gateway import auth
from approvals.oauth.models import OAuthGrant, RoleScope
from approvals.tokens.models import ClientToken
from approvals.views.oauth import REGISTRATIONS_PER_MINUTE
from tests.fixtures.people import make_user
from tests.oauth.flow import REDIRECT, SERVER, Authorization, register

pytestmark = pytest.mark.django_db


@pytest.fixture
def admins_client():
    """A public client an admin registered in Django's admin, redirect URIs and all."""
    application = Application.objects.create(
        name="Admin's agent",
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris=REDIRECT,
    )
    return Authorization(application.client_id)


@pytest.fixture
def browser(client, operators_may_grant):
    """An operator's browser, signed in."""
    client.force_login(make_user("olivia", roles.OPERATOR))
    return client


def nothing_granted():
    return not ClientToken.objects.exists() and not OAuthGrant.objects.exists()


def test_it_publishes_authorization_server_metadata_for_mcp_clients(client):
    for path in ("/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"):
        metadata = client.get(path).json()

        assert metadata["issuer"] == SERVER
        assert metadata["authorization_endpoint"] == f"{SERVER}/oauth/authorize/"
        assert metadata["token_endpoint"] == f"{SERVER}/oauth/token/"
        assert metadata["registration_endpoint"] == f"{SERVER}/oauth/register/"
        assert metadata["code_challenge_methods_supported"] == ["S256"]
        assert metadata["response_types_supported"] == ["code"]
        assert metadata["grant_types_supported"] == ["authorization_code", "refresh_token"]
        assert metadata["client_id_metadata_document_supported"] is True
        assert metadata["authorization_response_iss_parameter_supported"] is True
        assert "none" in metadata["token_endpoint_auth_methods_supported"]
        assert metadata["scopes_supported"] == ["tools:*"]


def test_it_names_itself_as_the_authorization_server_of_mcp(client):
    for path in ("/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"):
        metadata = client.get(path).json()

        assert metadata["resource"] == f"{SERVER}/mcp"
        assert metadata["authorization_servers"] == [SERVER]
        assert metadata["scopes_supported"] == ["tools:*"]


@override_settings(OAUTH_SERVER=False)
def test_it_has_no_authorization_server_when_turned_off(client, registered, browser):
    assert "authorization_servers" not in client.get("/.well-known/oauth-protected-resource").json()
    assert client.get("/.well-known/oauth-authorization-server").status_code == 404
    assert browser.get(registered.url()).status_code == 404
    assert client.post("/oauth/token/", {"grant_type": "authorization_code"}).status_code == 404
    assert client.post("/oauth/register/", "{}", content_type="application/json").status_code == 404


def test_it_registers_a_public_client_dynamically(app_client):
    response = register(app_client, client_name="Claude")

    assert response.status_code == 201
    body = response.json()
    assert body["token_endpoint_auth_method"] == "none"
    assert body["redirect_uris"] == [REDIRECT]
    assert "client_secret" not in body


def test_it_slows_down_an_address_that_registers_client_after_client(app_client, monkeypatch):
    # One minute throughout: the count starts again with each minute.
    monkeypatch.setattr(auth.time, "time", lambda: 1_800_000_000.0)
    auth.forget_requests("oauth-register:127.0.0.1")

    answers = [register(app_client).status_code for _ in range(REGISTRATIONS_PER_MINUTE + 1)]

    assert answers == [201] * REGISTRATIONS_PER_MINUTE + [429]


@pytest.mark.parametrize("uri", ["http://agent.example/callback", "https://agent.example/cb#frag", "javascript:x"])
def test_it_refuses_to_register_a_redirect_uri_it_would_never_send_anyone_to(app_client, uri):
    response = register(app_client, redirect_uris=[uri])

    assert response.status_code == 400
    assert response.json()["error"] == "invalid_redirect_uri"


def test_it_sends_a_visitor_who_is_not_signed_in_to_the_login_page(client, registered):
    response = client.get(registered.url())

    assert response.status_code == 302
    assert response["Location"].startswith("/login/?next=/oauth/authorize/")


def test_it_shows_who_asks_where_it_returns_and_for_what(browser, registered):
    response = browser.get(registered.url(scope="tools:demo_* tools:crm_lookup"))

    page = response.content.decode()
    assert response.status_code == 200
    assert "Allow Test Agent to use this console?" in page
    assert "by itself: its name is its own claim" in page
    assert REDIRECT in page
    assert "the tools matching <code>demo_*</code>" in page
    assert "the tools matching <code>crm_lookup</code>" in page
    assert ">Allow</button>" in page and ">Deny</button>" in page
    assert "form-action 'self' http://127.0.0.1:33418" in response["Content-Security-Policy"]


def test_it_grants_a_client_token_owned_by_the_person_who_allowed_it(browser, registered, app_client):
    answer = registered.allow(browser, expiry="7d", scope="tools:demo_*")

    assert answer["to"] == REDIRECT
    assert answer["state"] == registered.state
    assert answer["iss"] == SERVER
    assert nothing_granted()  # until the client exchanges its code
    tokens = registered.exchange(app_client, answer["code"]).json()

    assert tokens["token_type"] == "Bearer"
    assert tokens["scope"] == "tools:demo_*"
    assert tokens["refresh_token"]
    token = ClientToken.objects.get()
    assert token.owner.username == "olivia"
    assert token.tool_globs == ["demo_*"]
    assert token.token_hash is None
    assert 6 <= (token.expires_at - token.created_at).days <= 7
    grant = token.oauth_grant
    assert grant.resource == f"{SERVER}/mcp"
    assert grant.redirect_uri == REDIRECT
    event = AuditEvent.objects.get(action="oauth.granted")
    assert event.data["client"] == "Test Agent"
    assert event.data["scope"] == "tools:demo_*"
    assert tokens["access_token"] not in json.dumps(event.data)


def test_it_accepts_a_loopback_redirect_on_any_port(browser, registered, app_client):
    registered.redirect_uri = "http://127.0.0.1:61001/callback"

    answer = registered.allow(browser)

    assert answer["to"] == "http://127.0.0.1:61001/callback"
    assert registered.exchange(app_client, answer["code"]).status_code == 200


def test_it_sends_a_denial_back_and_grants_nothing(browser, registered):
    answer = registered.allow(browser, decision="deny")

    assert answer["error"] == "access_denied"
    assert answer["state"] == registered.state
    assert answer["iss"] == SERVER
    assert nothing_granted()
    assert AuditEvent.objects.get(action="oauth.denied").data["client"] == "Test Agent"


def test_it_never_sends_anyone_to_a_redirect_uri_the_client_did_not_register(browser, registered):
    registered.redirect_uri = "https://attacker.example/callback"

    for response in (browser.get(registered.url()), browser.post(registered.url(), {"decision": "allow"})):
        assert response.status_code == 400
        assert "Location" not in response
        assert "invalid_request" in response.content.decode() or "redirect" in response.content.decode()
    assert nothing_granted()


def test_it_refuses_a_request_without_pkce_or_with_plain_pkce(browser, admins_client):
    for changes in ({"code_challenge": None, "code_challenge_method": None}, {"code_challenge_method": "plain"}):
        answer = admins_client.allow(browser, **changes)

        assert answer["error"] == "invalid_request"
        assert answer["state"] == admins_client.state
    assert nothing_granted()


def test_it_sends_nobody_to_the_address_a_client_registered_for_itself_on_an_error(browser, app_client):
    registered = Authorization(register(app_client, redirect_uris=["https://attacker.example/cb"]).json()["client_id"])
    registered.redirect_uri = "https://attacker.example/cb"

    for request in (
        lambda: browser.get(registered.url(code_challenge_method="plain")),
        lambda: browser.get(registered.url(scope="admin")),
        lambda: browser.get(registered.url(response_type="token")),
        lambda: browser.get(registered.url(resource="https://other.example/mcp")),
        lambda: browser.post(registered.url(code_challenge=None), {"decision": "allow", "expiry": "7d"}),
    ):
        response = request()
        assert response.status_code == 400
        assert "Location" not in response
        assert "registered itself" in response.content.decode()
    assert nothing_granted()
    # Once the person decides, the client hears of it, wherever it asked to be told.
    assert registered.allow(browser, decision="deny")["to"] == "https://attacker.example/cb"


def test_it_refuses_an_exchange_without_the_pkce_verifier(browser, registered, app_client):
    answer = registered.allow(browser)

    response = registered.exchange(app_client, answer["code"], code_verifier=None)

    assert response.status_code == 400
    assert response.json()["error"] == "invalid_request"
    assert nothing_granted()


def test_it_refuses_an_exchange_with_the_wrong_verifier(browser, registered, app_client):
    answer = registered.allow(browser)

    response = registered.exchange(app_client, answer["code"], code_verifier="x" * 50)

    assert response.json()["error"] == "invalid_grant"
    assert nothing_granted()


def test_it_refuses_a_code_used_twice(browser, registered, app_client):
    code = registered.allow(browser)["code"]
    assert registered.exchange(app_client, code).status_code == 200

    response = registered.exchange(app_client, code)

    assert response.status_code == 400
    assert response.json()["error"] == "invalid_grant"
    assert ClientToken.objects.count() == 1


def test_it_refuses_an_exchange_with_another_redirect_uri(browser, registered, app_client):
    code = registered.allow(browser)["code"]

    response = registered.exchange(app_client, code, redirect_uri="http://127.0.0.1:33418/elsewhere")

    assert response.status_code in (400, 401)
    assert response.json()["error"] in ("invalid_grant", "invalid_request")
    assert nothing_granted()


def test_it_grants_nothing_for_another_resource(browser, registered, admins_client, app_client):
    answer = admins_client.allow(browser, resource="https://other.example/mcp")

    assert answer["error"] == "invalid_target"
    assert answer["iss"] == SERVER
    code = registered.allow(browser)["code"]
    response = registered.exchange(app_client, code, resource="https://other.example/mcp")

    assert response.status_code == 400, (response.content, response.headers)
    assert response.json()["error"] == "invalid_target"
    assert nothing_granted()


def test_it_refuses_a_scope_that_names_no_tools(browser, admins_client):
    answer = admins_client.allow(browser, scope="admin")

    assert answer["error"] == "invalid_scope"
    assert nothing_granted()


def test_it_rotates_a_refresh_token_that_works_once_and_not_twice(browser, registered, app_client):
    first = registered.grant(browser, app_client)

    renewed = registered.refresh(app_client, first["refresh_token"])
    again = registered.refresh(app_client, first["refresh_token"])

    assert renewed.status_code == 200
    assert renewed.json()["refresh_token"] != first["refresh_token"]
    assert again.status_code == 400
    assert again.json()["error"] == "invalid_grant"
    assert AuditEvent.objects.filter(action="oauth.refreshed").count() == 1
    # Reuse of a spent refresh token ends its family: the one just issued no longer works either.
    assert registered.refresh(app_client, renewed.json()["refresh_token"]).json()["error"] == "invalid_grant"


def test_it_renews_nothing_once_the_grant_is_revoked(browser, registered, app_client):
    tokens = registered.grant(browser, app_client)

    revoke_token(ClientToken.objects.get())

    assert registered.refresh(app_client, tokens["refresh_token"]).json()["error"] == "invalid_grant"


def test_it_lets_only_the_roles_an_admin_chose_allow_a_client(client, registered):
    client.force_login(make_user("audrey", roles.AUDITOR))

    response = client.post(registered.url(), {"decision": "allow", "expiry": "30d"})

    assert response.status_code == 403
    assert "You may not allow Test Agent" in response.content.decode()
    assert nothing_granted()
    RoleScope.objects.create(role=roles.AUDITOR, tool_globs=["*"])
    with override_settings(OAUTH_GRANT_ROLES=["admin", "operator", "auditor"]):
        assert client.post(registered.url(), {"decision": "allow", "expiry": "30d"}).status_code == 302


def test_it_asks_again_for_an_expiry_it_does_not_offer(browser, registered):
    response = browser.post(registered.url(), {"decision": "allow", "expiry": "5y"})

    assert response.status_code == 200
    assert "choose one of the expiries offered" in response.content.decode()
    assert nothing_granted()
