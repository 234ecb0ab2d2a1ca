"""Personal API keys: made and revoked on one's own page, shown once, kept hashed, audited; they act as their
user with the user's roles, and the browser's session works too, with its CSRF token for changes."""

import hashlib
import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from approvals import roles
from approvals.api.models import ApiKey
from approvals.audit.models import AuditEvent
from approvals.calls.models import Call
from tests.api.conftest import bearer, key_of
from tests.fixtures.people import make_user


def test_it_shows_a_new_key_once_keeps_its_hash_and_audits_it(person):
    user, browser = person("ann", roles.OPERATOR)

    made = browser.post("/account/", {"name": "triage bot"})
    secret = re.search(r"mcpk_[\w-]+", made.content.decode()).group(0)
    again = browser.get("/account/").content.decode()

    key = ApiKey.objects.get(user=user)
    assert key.name == "triage bot" and key.key_hash == hashlib.sha256(secret.encode()).hexdigest()
    assert secret not in again and key.prefix in again
    event = AuditEvent.objects.get(action="api_key.created")
    assert (event.actor_name, event.data["name"]) == ("ann", "triage bot")
    assert secret not in str(event.data)


def test_it_lets_a_person_revoke_their_own_key_and_no_one_elses(person, client):
    user, browser = person("ann", roles.OPERATOR)
    other, stranger = person("bob", roles.OPERATOR)
    browser.post("/account/", {"name": "bot"})
    key = ApiKey.objects.get(user=user)

    stranger.post(f"/account/keys/{key.pk}/revoke/")
    assert ApiKey.objects.get(pk=key.pk).revoked_at is None
    browser.post(f"/account/keys/{key.pk}/revoke/")

    assert ApiKey.objects.get(pk=key.pk).revoked_at is not None
    assert AuditEvent.objects.get(action="api_key.revoked").actor_name == "ann"


def test_it_refuses_a_revoked_key_or_a_deactivated_users_key_with_401(db, client):
    from approvals.api import keys

    secret = key_of("ann", roles.OPERATOR)
    assert client.get("/api/v1/me", headers=bearer(secret)).json()["username"] == "ann"
    keys.revoke_key(ApiKey.objects.get().user, ApiKey.objects.get().pk)
    assert client.get("/api/v1/me", headers=bearer(secret)).status_code == 401

    gone = key_of("gus", roles.OPERATOR, is_active=False)
    refused = client.get("/api/v1/me", headers=bearer(gone))
    assert refused.status_code == 401 and refused.json()["detail"].startswith("Sign in")


def test_it_answers_401_without_credentials_and_403_to_a_user_without_a_role(db, client):
    assert client.get("/api/v1/queue").status_code == 401
    assert client.get("/api/v1/queue", headers=bearer("mcpk_made-up")).status_code == 401
    refused = client.get("/api/v1/queue", headers=bearer(key_of("nobody")))
    assert refused.status_code == 403 and "no role" in refused.json()["detail"]


def test_it_refuses_an_auditors_key_a_decision_with_403(client, held, auditor_key):
    call, asked = held

    decided = client.post(
        f"/api/v1/calls/{call.pk}/decision",
        {"action": "approve", "binding": "0" * 64},
        content_type="application/json",
        headers=bearer(auditor_key),
    )
    answered = client.post(
        f"/api/v1/inputs/{asked.pk}/answer",
        {"action": "decline"},
        content_type="application/json",
        headers=bearer(auditor_key),
    )

    assert decided.status_code == 403 and "Auditors decide nothing" in decided.json()["detail"]
    assert answered.status_code == 403
    assert Call.objects.get(pk=call.pk).status == Call.Status.PENDING
    assert client.get(f"/api/v1/calls/{call.pk}", headers=bearer(auditor_key)).status_code == 200
    assert client.get("/api/v1/audit", headers=bearer(auditor_key)).status_code == 200


def test_it_keeps_the_audit_log_from_an_operators_key(db, client):
    refused = client.get("/api/v1/audit", headers=bearer(key_of("ann", roles.OPERATOR)))
    assert refused.status_code == 403


def test_it_takes_the_browsers_session_and_asks_its_csrf_token_for_a_change(held):
    call, _ = held
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(make_user("ann", roles.OPERATOR))
    browser.get("/queue/")
    token = browser.cookies["csrftoken"].value
    binding = browser.get(f"/api/v1/calls/{call.pk}").json()["binding"]
    decision = {"action": "deny", "binding": binding, "reason": "wrong order"}

    without = browser.post(f"/api/v1/calls/{call.pk}/decision", decision, content_type="application/json")
    with_token = browser.post(
        f"/api/v1/calls/{call.pk}/decision", decision, content_type="application/json", headers={"X-CSRFToken": token}
    )

    assert without.status_code == 403 and "CSRF" in without.json()["detail"]
    assert with_token.status_code == 200 and with_token.json()["call"]["status"] == "denied"
    assert browser.get("/api/v1/me").json()["authenticated_by"] == "session"


HUGE = 10**30


@pytest.mark.parametrize(
    "url",
    [
        f"/api/v1/calls/{HUGE}",
        f"/api/v1/inputs/{HUGE}",
        f"/api/v1/calls?before={HUGE}&limit={HUGE}",
        f"/api/v1/queue?min_age={HUGE}",
        f"/api/v1/audit?tool={HUGE}&before={HUGE}",
        "/api/v1/audit?since=yesterday",
        "/api/v1/calls?status=nonsense",
    ],
)
def test_it_answers_numbers_out_of_range_and_nonsense_in_json_without_a_server_error(db, client, url):
    answer = client.get(url, headers=bearer(key_of("ada", roles.ADMIN)))

    assert answer.status_code in (200, 404, 422) and answer.headers["content-type"].startswith("application/json")


def test_it_lets_a_read_only_key_read_and_refuses_it_any_decision(client, held):
    from approvals.api import keys

    call = held[0]
    secret = keys.create_key(make_user("rita", roles.OPERATOR), "dashboard", read_only=True)[1]

    assert client.get(f"/api/v1/calls/{call.pk}", headers=bearer(secret)).status_code == 200
    refused = client.post(
        f"/api/v1/calls/{call.pk}/decision",
        {"action": "deny", "binding": "0" * 64, "reason": "no"},
        content_type="application/json",
        headers=bearer(secret),
    )

    assert refused.status_code == 403 and "read-only" in refused.json()["detail"]
    assert Call.objects.get(pk=call.pk).status == Call.Status.PENDING


def test_it_refuses_a_key_past_its_expiry_with_401(db, client):
    from approvals.api import keys

    user = make_user("ann", roles.OPERATOR)
    lasting = keys.create_key(user, "soon", expires_at=timezone.now() + timedelta(minutes=5))[1]
    lapsed = keys.create_key(user, "gone", expires_at=timezone.now() - timedelta(seconds=1))[1]

    assert client.get("/api/v1/me", headers=bearer(lasting)).status_code == 200
    assert client.get("/api/v1/me", headers=bearer(lapsed)).status_code == 401


def test_it_makes_a_key_with_an_expiry_and_a_read_only_scope_from_the_account_page(person):
    user, browser = person("ann", roles.OPERATOR)

    browser.post("/account/", {"name": "dashboard", "expires": "30", "read_only": "on"})
    browser.post("/account/", {"name": "bot"})

    made = {key.name: key for key in ApiKey.objects.filter(user=user)}
    assert made["dashboard"].read_only and not made["bot"].read_only and made["bot"].expires_at is None
    assert timedelta(days=29) < made["dashboard"].expires_at - timezone.now() <= timedelta(days=30)
    page = browser.get("/account/").content.decode()
    assert "read-only" in page and "in 30\xa0days" in page
