"""The token endpoint serves the authorization code and refresh grants alone, answers every other grant in OAuth's
own terms, and counts each client-secret check against the sign-in throttle, as /login/ counts passwords."""

import base64

import pytest
from django.urls import reverse
from oauth2_provider.models import Application, get_access_token_model

from approvals import roles
from approvals.audit.models import AuditEvent
from approvals.signin import throttle
from tests.fixtures.people import PASSWORD, make_user
from tests.oauth.flow import REDIRECT, register

pytestmark = pytest.mark.django_db

ADDRESS = "198.51.100.40"
SECRET = "the client's right secret, long enough"
GUESSED = [f"agent-{n}" for n in range(20)]


@pytest.fixture(autouse=True)
def fresh_counts(settings, registrations_afresh):
    """No count left behind in the sign-in cache, which outlives each test's database."""
    settings.SIGNIN_FAILURES_PER_USERNAME = 5
    settings.SIGNIN_FAILURES_PER_ADDRESS = 20
    yield
    names = ("ada", "confidential-agent", *GUESSED)
    stems = {stem for name in names for _, stem, _ in throttle.subjects(name, ADDRESS)}
    throttle.counters().delete_many([f"{stem}:{part}" for stem in stems for part in ("tries", "locked")])


def application(grant, client_type=Application.CLIENT_CONFIDENTIAL, **fields) -> Application:
    """A client an admin registered in Django's admin."""
    return Application.objects.create(
        name="Admin's agent",
        client_id="confidential-agent",
        client_type=client_type,
        authorization_grant_type=grant,
        redirect_uris=REDIRECT,
        client_secret=SECRET,
        user=make_user("root", superuser=True),
        **fields,
    )


def basic(client_id: str, secret: str) -> str:
    return "Basic " + base64.b64encode(f"{client_id}:{secret}".encode()).decode()


def secret_try(client, secret: str, client_id="confidential-agent"):
    body = {"grant_type": "authorization_code", "code": "x" * 30, "redirect_uri": REDIRECT}
    return client.post("/oauth/token/", body, HTTP_AUTHORIZATION=basic(client_id, secret), REMOTE_ADDR=ADDRESS)


@pytest.mark.parametrize("grant", ["password", "implicit", "client_credentials"])
def test_it_registers_no_client_for_a_grant_it_does_not_serve(client, grant):
    response = register(client, grant_types=[grant])

    assert response.status_code == 400
    assert response.json()["error"] == "invalid_client_metadata"
    assert f"not {grant!r}" in response.json()["error_description"]
    assert not Application.objects.exists()


def test_it_refuses_to_register_the_token_response_type(client):
    response = register(client, response_types=["code", "token"])

    assert response.status_code == 400
    assert response.json()["error"] == "invalid_client_metadata"


def test_it_tells_no_password_apart_through_the_password_grant(client):
    make_user("ada", roles.ADMIN)
    application(Application.GRANT_PASSWORD, client_type=Application.CLIENT_PUBLIC)
    body = {"grant_type": "password", "username": "ada", "client_id": "confidential-agent"}

    wrong = [client.post("/oauth/token/", {**body, "password": f"guess {n}"}, REMOTE_ADDR=ADDRESS) for n in range(40)]
    right = client.post("/oauth/token/", {**body, "password": PASSWORD}, REMOTE_ADDR=ADDRESS)

    answers = {(r.status_code, r.content) for r in [*wrong, right]}
    assert answers == {(400, b'{"error": "unsupported_grant_type"}')}
    assert not get_access_token_model().objects.exists()
    # Nothing checked ada's password, so nothing locked her out either.
    page = client.post(reverse("login"), {"username": "ada", "password": PASSWORD}, REMOTE_ADDR="203.0.113.5")
    assert page.status_code == 302


def test_it_answers_a_client_credentials_request_in_oauth_terms(client):
    application(Application.GRANT_CLIENT_CREDENTIALS)

    response = client.post(
        "/oauth/token/", {"grant_type": "client_credentials"}, HTTP_AUTHORIZATION=basic("confidential-agent", SECRET)
    )

    assert response.status_code == 400
    assert response.json() == {"error": "unsupported_grant_type"}


def test_it_locks_out_client_secret_guesses_as_sign_in_does(client):
    application(Application.GRANT_AUTHORIZATION_CODE)

    wrong = [secret_try(client, f"guess {n}") for n in range(40)]
    right = secret_try(client, SECRET)

    assert [r.json()["error"] for r in wrong[:5]] == ["invalid_client"] * 5
    locked = wrong[5:] + [right]
    assert {(r.status_code, r.json()["error"]) for r in locked} == {(401, "invalid_client")}
    assert {r.json()["error_description"] for r in locked} == {
        "Too many failed sign-ins for this client or from this address. Try again in 15 minutes."
    }
    assert AuditEvent.objects.filter(action="user.login_failed").count() == 5
    lockout = AuditEvent.objects.get(action="user.login_locked").data
    assert (lockout["username"], lockout["address"], lockout["locked"]) == (
        "confidential-agent",
        ADDRESS,
        ["username"],
    )


def test_it_counts_guesses_at_many_clients_against_the_address_sign_in_uses(client):
    make_user("ada", roles.ADMIN)
    for client_id in GUESSED:
        assert secret_try(client, "guess", client_id).status_code == 401

    page = client.post(reverse("login"), {"username": "ada", "password": PASSWORD}, REMOTE_ADDR=ADDRESS)

    assert page.status_code == 200
    assert "Too many failed sign-ins" in page.content.decode()


def test_it_counts_no_try_that_checked_nothing_it_could_tell(client):
    application(Application.GRANT_AUTHORIZATION_CODE)

    answers = [secret_try(client, SECRET).json()["error"] for _ in range(30)]

    # The code is made up, so each is refused: after the secret was found right, but the answer does not say so.
    assert set(answers) == {"invalid_grant"}
    assert not AuditEvent.objects.filter(action__startswith="user.login").exists()


def test_it_lets_no_request_of_another_grant_clear_the_count_of_guesses(client):
    application(Application.GRANT_AUTHORIZATION_CODE)
    other_grant = {"grant_type": "password", "username": "x", "password": "y"}

    for n in range(5):
        client.post(
            "/oauth/token/", other_grant, HTTP_AUTHORIZATION=basic("confidential-agent", SECRET), REMOTE_ADDR=ADDRESS
        )
        assert secret_try(client, f"guess {n}").json()["error"] == "invalid_client"

    assert "Too many failed sign-ins" in secret_try(client, SECRET).json()["error_description"]
