"""The People page: admins alone see and change people; each change is one audited action, and deactivating ends
what the person holds, audited once."""

import pytest
from django.contrib.auth import authenticate
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from approvals import roles
from approvals.api import keys
from approvals.audit.models import AuditEvent
from approvals.signin.models import SsoIdentity
from approvals.tokens.credentials import create_token
from approvals.tokens.models import ClientToken
from tests.fixtures.people import make_user

PAGES = [
    ("get", "people", False),
    ("post", "people", False),
    ("post", "person_roles", True),
    ("post", "person_deactivate", True),
    ("post", "person_reactivate", True),
]


def url(name, person=None):
    return reverse(name, args=[person.pk]) if person else reverse(name)


@pytest.mark.parametrize("role", [roles.OPERATOR, roles.AUDITOR])
@pytest.mark.parametrize(("method", "name", "of_person"), PAGES)
def test_it_refuses_operators_and_auditors_every_people_page_with_403(login, role, method, name, of_person):
    olivia = make_user("olivia", roles.OPERATOR)
    client = login(role)
    response = getattr(client, method)(url(name, olivia if of_person else None), {"roles": [roles.ADMIN]})
    assert response.status_code == 403
    olivia.refresh_from_db()
    assert olivia.is_active and list(olivia.groups.values_list("name", flat=True)) == [roles.OPERATOR]


def test_it_refuses_a_post_without_its_csrf_token(db):
    admin = make_user("ada", roles.ADMIN)
    client = Client(enforce_csrf_checks=True)
    client.force_login(admin)
    olivia = make_user("olivia", roles.OPERATOR)
    assert client.post(url("person_deactivate", olivia)).status_code == 403
    olivia.refresh_from_db()
    assert olivia.is_active


def test_it_lists_people_with_roles_sso_identity_and_what_they_hold(admin_client):
    olivia = make_user("olivia", roles.OPERATOR, roles.AUDITOR, email="olivia@example.com")
    SsoIdentity.objects.create(user=olivia, issuer="https://idp.example", subject="sub-olivia")
    keys.create_key(olivia, "her bot")
    create_token("olivia's agent", owner=olivia)
    Client().force_login(olivia)

    page = admin_client.get(url("people")).content.decode()

    row = page.split('data-person="olivia"', 1)[1].split("</tr>", 1)[0]
    assert 'value="operator" checked' in row and 'value="auditor" checked' in row
    assert 'value="admin" checked' not in row
    assert "sub-olivia" in row and "https://idp.example" in row and "olivia@example.com" in row
    assert '<td data-held="sessions">1</td>' in row and '<td data-held="api_keys">1</td>' in row
    assert f'<td data-held="client_tokens"><a href="{reverse("tokens")}">1</a></td>' in row
    assert '<td data-held="oauth_grants">0</td>' in row
    assert f'href="{reverse("people")}"' in page  # the admin menu leads here


def test_it_creates_a_person_with_roles_and_a_password_shown_once(admin_client):
    response = admin_client.post(
        url("people"), {"username": "newt", "email": "newt@example.com", "roles": [roles.OPERATOR]}
    )

    person, password = response.context["created"]
    assert password and password in response.content.decode()
    assert "no-store" in response.headers["Cache-Control"]
    assert list(person.groups.values_list("name", flat=True)) == [roles.OPERATOR]
    assert authenticate(username="newt", password=password) == person
    event = AuditEvent.objects.get(action="person.created")
    assert (event.actor_name, event.data["before"]) == ("admin", None)
    assert event.data["after"] == {
        "username": "newt",
        "email": "newt@example.com",
        "roles": [roles.OPERATOR],
        "is_active": True,
    }
    assert password not in str(event.data)
    assert password not in admin_client.get(url("people")).content.decode()


@pytest.mark.parametrize(
    ("form", "field"),
    [
        ({"username": "", "roles": []}, "username"),
        ({"username": "a b", "roles": []}, "username"),
        ({"username": "admin", "roles": []}, "username"),
        ({"username": "x", "email": "no", "roles": []}, "email"),
        ({"username": "x", "roles": ["root"]}, "roles"),
    ],
    ids=["missing", "spaces", "taken", "email", "unknown-role"],
)
def test_it_says_what_is_wrong_with_a_new_person_at_the_field(admin_client, form, field):
    response = admin_client.post(url("people"), form)
    assert response.status_code == 200 and field in response.context["form"].errors
    assert not AuditEvent.objects.filter(action="person.created").exists()
    assert User.objects.count() == 1


def test_it_changes_roles_audited_before_and_after(admin_client, django_capture_on_commit_callbacks):
    olivia = make_user("olivia", roles.OPERATOR)
    with django_capture_on_commit_callbacks(execute=True):
        admin_client.post(url("person_roles", olivia), {"roles": [roles.AUDITOR, roles.ADMIN]})

    assert sorted(olivia.groups.values_list("name", flat=True)) == [roles.ADMIN, roles.AUDITOR]
    event = AuditEvent.objects.get(action="person.roles_changed")
    assert event.data["before"]["roles"] == [roles.OPERATOR]
    assert event.data["after"]["roles"] == [roles.ADMIN, roles.AUDITOR]
    assert event.actor_name == "admin"


def test_it_ends_the_access_of_a_person_left_with_no_role_in_the_admins_name(
    admin_client, django_capture_on_commit_callbacks
):
    olivia = make_user("olivia", roles.OPERATOR)
    create_token("olivia's agent", owner=olivia)
    with django_capture_on_commit_callbacks(execute=True):
        admin_client.post(url("person_roles", olivia), {})

    ended = AuditEvent.objects.get(action="user.access_ended")
    assert (ended.actor_name, ended.data["client_tokens"]) == ("admin", ["olivia's agent"])


def test_it_deactivates_a_person_ending_everything_they_hold_audited_once(
    admin_client, django_capture_on_commit_callbacks
):
    olivia = make_user("olivia", roles.OPERATOR)
    create_token("olivia's agent", owner=olivia)
    keys.create_key(olivia, "her bot")
    browser = Client()
    browser.force_login(olivia)

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = admin_client.post(url("person_deactivate", olivia), {"reason": "left the company"})

    assert response.status_code == 302 and callbacks
    olivia.refresh_from_db()
    assert not olivia.is_active
    assert not ClientToken.objects.filter(owner=olivia, revoked_at__isnull=True).exists()
    assert not olivia.api_keys.filter(revoked_at__isnull=True).exists()
    assert browser.get(reverse("queue")).status_code == 302
    ended = AuditEvent.objects.get(action="user.access_ended")
    assert (ended.actor_name, ended.data["reason"], ended.data["sessions"]) == ("admin", "left the company", 1)
    event = AuditEvent.objects.get(action="person.deactivated")
    assert (event.data["before"]["is_active"], event.data["after"]["is_active"]) == (True, False)


def test_it_reactivates_a_person_without_giving_back_what_was_revoked(admin_client):
    olivia = make_user("olivia", roles.OPERATOR)
    token, _ = create_token("olivia's agent", owner=olivia)
    admin_client.post(url("person_deactivate", olivia))

    admin_client.post(url("person_reactivate", olivia))

    olivia.refresh_from_db()
    token.refresh_from_db()
    assert olivia.is_active and token.revoked
    event = AuditEvent.objects.get(action="person.reactivated")
    assert (event.data["before"]["is_active"], event.data["after"]["is_active"]) == (False, True)
    assert AuditEvent.objects.filter(action="user.access_ended").count() == 1


def test_it_refuses_an_admin_deactivating_themselves_or_dropping_their_own_admin_role(db):
    ada = make_user("ada", roles.ADMIN)
    client = Client()
    client.force_login(ada)

    client.post(url("person_deactivate", ada))
    client.post(url("person_roles", ada), {"roles": [roles.OPERATOR]})

    ada.refresh_from_db()
    assert ada.is_active and list(ada.groups.values_list("name", flat=True)) == [roles.ADMIN]
    assert not AuditEvent.objects.filter(action__startswith="person.").exists()


@pytest.mark.parametrize("method", ["get", "post"])
def test_it_makes_no_account_nobody_could_sign_in_to_when_passwords_are_off(admin_client, settings, method):
    settings.LOCAL_LOGIN = False
    response = getattr(admin_client, method)(url("people"), {"username": "newt", "roles": [roles.OPERATOR]})
    assert response.status_code == 200 and "first SSO sign-in" in response.content.decode()
    assert 'name="username"' not in response.content.decode()
    assert not User.objects.filter(username="newt").exists()
    assert not AuditEvent.objects.filter(action="person.created").exists()


def test_it_leaves_the_break_glass_superusers_to_django_admin(admin_client):
    root = make_user("root", superuser=True)

    admin_client.post(url("person_roles", root), {"roles": [roles.OPERATOR]})
    admin_client.post(url("person_deactivate", root))
    page = admin_client.get(url("people")).content.decode()

    root.refresh_from_db()
    assert root.is_active and not root.groups.exists()
    assert reverse("person_deactivate", args=[root.pk]) not in page
    assert not AuditEvent.objects.filter(action__startswith="person.").exists()
