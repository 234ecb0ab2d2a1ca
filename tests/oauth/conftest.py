import pytest
from django.test import Client

from approvals.gateway.auth import forget_requests
from tests.oauth.flow import Authorization, register


@pytest.fixture
def registrations_afresh():
    """Every test's clients register from 127.0.0.1, which may register so many a minute: each test starts at 0."""
    forget_requests("oauth-register:127.0.0.1")


@pytest.fixture
def app_client(registrations_afresh):
    """The OAuth client's own HTTP client: no session, no cookies."""
    return Client()


@pytest.fixture
def registered(app_client):
    """A client registered as an MCP client registers itself."""
    response = register(app_client)
    assert response.status_code == 201, response.content
    return Authorization(response.json()["client_id"])
