"""OAuth access tokens at /mcp: accepted for the resource they were issued for, as the client token they stand for."""

import datetime

import httpx
import pytest
from django.test import Client, override_settings
from django.utils import timezone
from oauth2_provider.models import AccessToken

from approvals import roles
from approvals.tokens.models import ClientToken
from tests.fixtures.gateway import MODERN, modern_envelope
from tests.fixtures.people import make_user
from tests.oauth.flow import Authorization, register


def tools_list(url, access_token):
    headers = {
        "Authorization": f"Bearer {access_token}",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "tools/list",
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": modern_envelope()}
    return httpx.post(url, json=body, headers=headers)


@pytest.fixture
def grant_for(live_console, registrations_afresh, operators_may_grant):
    """Grants a client access through the console as reached at `host`; returns the token response."""
    operator = make_user("olivia", roles.OPERATOR)

    def grant(host):
        browser, app = Client(HTTP_HOST=host), Client(HTTP_HOST=host)
        browser.force_login(operator)
        authorization = Authorization(register(app).json()["client_id"], server=f"http://{host}")
        return authorization.grant(browser, app)

    return grant


def host_of(url):
    return url.removeprefix("http://")


def test_it_serves_a_client_with_an_access_token_as_the_grants_client_token(live_console, mcp_url, grant_for):
    tokens = grant_for(host_of(live_console))

    response = tools_list(mcp_url, tokens["access_token"])

    assert response.status_code == 200
    assert "tools" in response.json()["result"]
    assert ClientToken.objects.get().last_used_at is not None


def test_it_refuses_a_token_issued_for_another_resource(live_console, mcp_url, grant_for):
    # The same console under another name is another resource: the token names http://localhost:PORT/mcp.
    tokens = grant_for(host_of(live_console).replace("127.0.0.1", "localhost"))

    response = tools_list(mcp_url, tokens["access_token"])

    assert response.status_code == 401
    challenge = response.headers["WWW-Authenticate"]
    assert 'error="invalid_token"' in challenge
    assert f"issued for another resource than {mcp_url}" in challenge
    assert tools_list(mcp_url.replace("127.0.0.1", "localhost"), tokens["access_token"]).status_code == 200


def test_it_refuses_an_expired_access_token(live_console, mcp_url, grant_for):
    tokens = grant_for(host_of(live_console))
    AccessToken.objects.update(expires=timezone.now() - datetime.timedelta(seconds=1))

    response = tools_list(mcp_url, tokens["access_token"])

    assert response.status_code == 401
    assert "the access token expired" in response.headers["WWW-Authenticate"]


def test_it_refuses_a_made_up_bearer_token(mcp_url, live_console):
    response = tools_list(mcp_url, "not-a-token")

    assert response.status_code == 401
    assert "the bearer token is unknown" in response.headers["WWW-Authenticate"]


def test_it_takes_no_access_token_while_the_authorization_server_is_off(live_console, mcp_url, grant_for):
    tokens = grant_for(host_of(live_console))

    with override_settings(OAUTH_SERVER=False):
        response = tools_list(mcp_url, tokens["access_token"])

    assert response.status_code == 401
    assert "scope=" not in response.headers["WWW-Authenticate"]
