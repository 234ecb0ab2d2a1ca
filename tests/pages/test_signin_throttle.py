"""Failed sign-ins are throttled per username and per address, and each lockout is audited once."""

import pytest
from django.urls import reverse

from approvals.audit.models import AuditEvent
from approvals.signin import throttle
from tests.fixtures.people import PASSWORD, make_user

ADDRESS, ELSEWHERE = "198.51.100.7", "203.0.113.9"
NAMES = ["ada", *(f"user{n}" for n in range(6))]


@pytest.fixture(autouse=True)
def small_limits(settings):
    """Low limits, and no count left behind in the cache, which outlives each test's database."""
    settings.SIGNIN_FAILURES_PER_USERNAME = 3
    settings.SIGNIN_FAILURES_PER_ADDRESS = 5
    settings.SIGNIN_LOCKOUT_SECONDS = 600
    yield
    stems = {
        stem for name in NAMES for address in (ADDRESS, ELSEWHERE) for _, stem, _ in throttle.subjects(name, address)
    }
    throttle.counters().delete_many([f"{stem}:{part}" for stem in stems for part in ("tries", "locked")])


def sign_in(client, username, password, address=ADDRESS):
    return client.post(reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=address)


def signed_in(response) -> bool:
    return response.status_code == 302


def test_it_locks_a_username_out_after_its_failures_even_with_the_right_password(client, db):
    make_user("ada")
    for _ in range(3):
        assert not signed_in(sign_in(client, "ada", "wrong"))
    page = sign_in(client, "ada", PASSWORD, address=ELSEWHERE)
    assert page.status_code == 200
    assert "Too many failed sign-ins for this username or from this address. Try again in 10 minutes." in (
        page.content.decode()
    )


def test_it_audits_a_burst_once_when_its_lockout_starts(client, db):
    make_user("ada")
    for _ in range(7):
        sign_in(client, "ada", "wrong")
    actions = list(AuditEvent.objects.order_by("seq").values_list("action", flat=True))
    assert actions == ["user.login_failed"] * 3 + ["user.login_locked"]
    locked = AuditEvent.objects.get(action="user.login_locked").data
    assert (locked["username"], locked["address"], locked["locked"]) == ("ada", ADDRESS, ["username"])


def test_it_locks_an_address_out_that_tries_many_names(client, db):
    make_user("user5")
    for n in range(5):
        sign_in(client, f"user{n}", "wrong")
    assert AuditEvent.objects.get(action="user.login_locked").data["locked"] == ["address"]
    assert not signed_in(sign_in(client, "user5", PASSWORD))
    assert signed_in(sign_in(client, "user5", PASSWORD, address=ELSEWHERE))


def test_it_clears_a_username_s_failures_when_it_signs_in(client, db):
    make_user("ada")
    for _ in range(2):
        sign_in(client, "ada", "wrong")
    assert signed_in(sign_in(client, "ada", PASSWORD))
    client.logout()
    for _ in range(2):
        sign_in(client, "ada", "wrong")
    assert not AuditEvent.objects.filter(action="user.login_locked").exists()


def test_it_throttles_django_admin_s_sign_in_too(client, db):
    make_user("ada", superuser=True)
    for _ in range(3):
        sign_in(client, "ada", "wrong")
    page = client.post(reverse("admin:login"), {"username": "ada", "password": PASSWORD}, REMOTE_ADDR=ADDRESS)
    assert page.status_code == 200 and "Too many failed sign-ins" in page.content.decode()
