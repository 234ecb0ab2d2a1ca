"""An OAuth grant on the Tokens page: its client, who allowed it and where it returns; its owner revokes it.
Clients an admin registers; expired codes swept away."""

import datetime

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from oauth2_provider.models import Grant

from approvals import roles, tasks
from approvals.audit.models import AuditEvent
from approvals.tokens.models import ClientToken
from tests.fixtures.people import make_user
from tests.oauth.flow import REDIRECT, Authorization, register

pytestmark = pytest.mark.django_db


@pytest.fixture
def granted(client, registrations_afresh, operators_may_grant):
    """Olivia, an operator, allowed Test Agent; her browser, and the client's token response."""
    client.force_login(make_user("olivia", roles.OPERATOR))
    app = Client()
    authorization = Authorization(register(app).json()["client_id"])
    return client, authorization, app, authorization.grant(client, app)


def test_it_shows_the_grant_with_its_client_person_and_redirect(granted):
    browser, *_ = granted

    page = browser.get(reverse("tokens")).content.decode()

    assert "Test Agent" in page
    assert "allowed by olivia" in page
    assert f"back to <code>{REDIRECT}</code>" in page
    token = ClientToken.objects.get()
    assert reverse("token_revoke", args=[token.pk]) in page
    assert reverse("token_rotate", args=[token.pk]) not in page


def test_it_lets_the_person_who_allowed_a_client_revoke_it(granted):
    browser, authorization, app, tokens = granted
    token = ClientToken.objects.get()

    response = browser.post(reverse("token_revoke", args=[token.pk]))

    assert response.status_code == 302
    token.refresh_from_db()
    assert token.revoked
    assert AuditEvent.objects.get(action="token.revoked").actor_name == "olivia"
    assert authorization.refresh(app, tokens["refresh_token"]).json()["error"] == "invalid_grant"


def test_it_lets_no_other_operator_revoke_someone_elses_grant(granted):
    token = ClientToken.objects.get()
    other = Client()
    other.force_login(make_user("bob", roles.OPERATOR))

    assert reverse("token_revoke", args=[token.pk]) not in other.get(reverse("tokens")).content.decode()
    assert other.post(reverse("token_revoke", args=[token.pk])).status_code == 403
    token.refresh_from_db()
    assert not token.revoked


def test_it_lets_an_admin_preregister_a_client_audited_without_its_secret(client):
    client.force_login(make_user("ada", superuser=True))
    form = {
        "client_id": "nightly-agent",
        "redirect_uris": "https://agent.example/callback",
        "post_logout_redirect_uris": "",
        "allowed_origins": "",
        "client_type": "confidential",
        "authorization_grant_type": "authorization-code",
        "client_secret": "a-secret-the-log-never-holds",
        "hash_client_secret": "on",
        "name": "Nightly agent",
        "algorithm": "",
    }

    response = client.post(reverse("admin:oauth2_provider_application_add"), form)

    assert response.status_code == 302, response.content.decode()[:3000]
    event = AuditEvent.objects.get(action="admin.added")
    assert "Nightly agent" in str(event.data)
    assert "a-secret-the-log-never-holds" not in str(event.data)
    assert client.get(reverse("admin:index")).content.decode().count("oauth2_provider/accesstoken") == 0


def test_it_sweeps_away_codes_past_their_minute(client, registrations_afresh, operators_may_grant):
    client.force_login(make_user("olivia", roles.OPERATOR))
    authorization = Authorization(register(Client()).json()["client_id"])
    authorization.allow(client)
    Grant.objects.update(expires=timezone.now() - datetime.timedelta(seconds=1))

    tasks.prune_oauth()

    assert not Grant.objects.exists()
