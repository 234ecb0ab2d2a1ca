"""Open registration within bounds: a capped document, at most ten redirect URIs of bounded length, an update held
to the same checks and the same rate, and the registrations nobody allowed pruned a day on."""

import datetime
import json

import pytest
from django.utils import timezone
from oauth2_provider.models import Application, get_access_token_model

from approvals import roles, tasks
from approvals.gateway import auth
from approvals.views.oauth import REGISTRATIONS_PER_MINUTE
from tests.fixtures.people import make_user
from tests.oauth.flow import REDIRECT, Authorization, register

pytestmark = pytest.mark.django_db


def update(client, registration: dict, **metadata):
    body = {"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none", **metadata}
    return client.put(
        registration["registration_client_uri"].removeprefix("http://testserver"),
        json.dumps(body),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {registration['registration_access_token']}",
    )


def test_it_refuses_a_registration_document_over_16_kib(app_client):
    response = register(app_client, client_name="x" * (16 * 1024))

    assert response.status_code == 400
    assert response.json() == {
        "error": "invalid_client_metadata",
        "error_description": "a registration document is at most 16384 bytes",
    }
    assert not Application.objects.exists()


def test_it_refuses_a_document_announced_too_big_without_reading_it(app_client):
    response = app_client.post("/oauth/register/", "{}", content_type="application/json", CONTENT_LENGTH="2600000")

    assert response.status_code == 400
    assert response.json()["error"] == "invalid_client_metadata"


def test_it_refuses_more_than_ten_redirect_uris(app_client):
    uris = [f"http://127.0.0.1:{5000 + n}/cb" for n in range(11)]

    response = register(app_client, redirect_uris=uris)

    assert response.status_code == 400
    assert response.json()["error"] == "invalid_redirect_uri"
    assert "at most 10 redirect URIs" in response.json()["error_description"]
    assert register(app_client, redirect_uris=uris[:10]).status_code == 201


def test_it_refuses_a_redirect_uri_over_2_kib(app_client):
    response = register(app_client, redirect_uris=["https://agent.example/" + "a" * 2048])

    assert response.status_code == 400
    assert response.json()["error_description"] == "a redirect URI is at most 2048 characters"


def test_it_holds_an_update_to_the_checks_of_a_registration(app_client):
    registration = register(app_client).json()

    for changes, error in (
        ({"redirect_uris": ["http://agent.example/cb"]}, "invalid_redirect_uri"),
        ({"redirect_uris": [REDIRECT] * 11}, "invalid_redirect_uri"),
        ({"grant_types": ["password"]}, "invalid_client_metadata"),
        ({"client_name": "x" * (16 * 1024)}, "invalid_client_metadata"),
    ):
        response = update(app_client, registration, **changes)
        assert response.status_code == 400, changes
        assert response.json()["error"] == error
    assert Application.objects.get().redirect_uris == REDIRECT
    assert update(app_client, registration, client_name="Renamed").json()["client_name"] == "Renamed"


def test_it_counts_updates_against_the_registration_rate(app_client, monkeypatch):
    monkeypatch.setattr(auth.time, "time", lambda: 1_800_000_000.0)
    auth.forget_requests("oauth-register:127.0.0.1")
    registration, answers = register(app_client).json(), []
    for _ in range(REGISTRATIONS_PER_MINUTE):
        response = update(app_client, registration)
        answers.append(response.status_code)
        # Each update rotates the registration access token.
        registration = response.json() if response.status_code == 200 else registration

    assert answers == [200] * (REGISTRATIONS_PER_MINUTE - 1) + [429]


def test_it_prunes_registrations_nobody_allowed_after_a_day(app_client, client):
    client.force_login(make_user("ada", roles.ADMIN))
    unused, fresh, used = (register(app_client).json()["client_id"] for _ in range(3))
    Authorization(used).grant(client, app_client)
    admins = Application.objects.create(
        name="Admin's", client_type="public", authorization_grant_type="authorization-code", redirect_uris=REDIRECT
    )
    day_ago = timezone.now() - datetime.timedelta(hours=25)
    Application.objects.exclude(client_id=fresh).update(created=day_ago)

    tasks.prune_oauth()

    assert set(Application.objects.values_list("client_id", flat=True)) == {fresh, used, admins.client_id}
    assert not get_access_token_model().objects.filter(application__isnull=True).exists()
