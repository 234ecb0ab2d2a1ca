"""end_person_access and the signals that call it, in-process: what ends, once, and what a mere change of role keeps."""

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from approvals import roles
from approvals.actions import person_access
from approvals.api import keys
from approvals.api.models import ApiKey
from approvals.audit.models import AuditEvent
from approvals.calls.models import Call
from approvals.db.models import BrowserSession
from approvals.tokens.credentials import admit, create_token
from approvals.tokens.models import ClientToken
from tests.calls.test_token_revocation import pending_call
from tests.fixtures.people import make_user
from tests.oauth.flow import Authorization, register

pytestmark = pytest.mark.django_db


@pytest.fixture
def olivia(client):
    """An operator signed in, with a client token of her own and an API key."""
    user = make_user("olivia", roles.OPERATOR)
    client.force_login(user)
    create_token("olivia's agent", owner=user)
    keys.create_key(user, "her bot")
    return user


def live_tokens():
    return list(ClientToken.objects.filter(revoked_at__isnull=True).values_list("name", flat=True))


def test_it_ends_everything_once_and_records_it_once(olivia, refund_tool):
    call = pending_call(ClientToken.objects.get(owner=olivia), refund_tool)
    root = make_user("root", superuser=True)

    ended = person_access.end_person_access(olivia, "offboarded", root)
    again = person_access.end_person_access(olivia, "offboarded", root)

    assert ended and not again
    assert (ended.client_tokens, ended.api_keys, ended.sessions, ended.calls_cancelled) == (
        ["olivia's agent"],
        [f"her bot ({ApiKey.objects.get().prefix}…)"],
        1,
        1,
    )
    assert live_tokens() == [] and not ApiKey.objects.filter(revoked_at__isnull=True).exists()
    assert not BrowserSession.objects.exists()
    call.refresh_from_db()
    assert call.status == Call.Status.CANCELLED and call.reason == "the client token was revoked: offboarded"
    event = AuditEvent.objects.get(action="user.access_ended")
    assert (event.actor_name, event.data["username"], event.data["reason"]) == ("root", "olivia", "offboarded")


def test_it_gives_nothing_back_to_a_person_reactivated(olivia, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        olivia.is_active = False
        olivia.save()
    with django_capture_on_commit_callbacks(execute=True):
        olivia.is_active = True
        olivia.save()

    assert live_tokens() == [] and AuditEvent.objects.filter(action="user.access_ended").count() == 1


def test_it_keeps_the_credentials_of_a_person_whose_role_changes_but_ends_their_sessions(
    olivia, client, django_capture_on_commit_callbacks
):
    # Groups are set by removing the old and then adding the new: between the two she holds no role.
    with django_capture_on_commit_callbacks(execute=True):
        olivia.groups.set(Group.objects.filter(name=roles.AUDITOR))

    assert live_tokens() == ["olivia's agent"] and not ApiKey.objects.filter(revoked_at__isnull=False).exists()
    assert client.get("/audit/")["Location"].startswith("/login/")
    assert not AuditEvent.objects.filter(action="user.access_ended").exists()


def test_it_revokes_the_tokens_of_a_person_deleted_rather_than_leave_them_owned_by_nobody(olivia):
    olivia.delete()

    assert live_tokens() == []
    assert AuditEvent.objects.get(action="user.access_ended").data["reason"] == person_access.DELETED


def test_it_ends_the_access_of_the_members_of_a_role_s_group_deleted(olivia, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        Group.objects.get(name=roles.OPERATOR).delete()

    assert live_tokens() == []
    assert AuditEvent.objects.get(action="user.access_ended").data["reason"] == person_access.NO_ROLE
    roles.ensure_roles()


def test_it_refuses_a_token_whose_owner_holds_no_role_until_they_hold_one_again(olivia):
    token, secret = create_token("second agent", owner=olivia)
    olivia.groups.clear()
    assert admit(secret).token is None

    olivia.groups.add(Group.objects.get(name=roles.AUDITOR))

    assert admit(secret).token == token


def test_it_refuses_the_exchange_of_a_code_given_before_the_person_s_access_ended(
    client, registrations_afresh, operators_may_grant
):
    app = Client()
    authorization = Authorization(register(app).json()["client_id"])
    client.force_login(make_user("ann", roles.OPERATOR))
    code = authorization.allow(client)["code"]
    User.objects.filter(username="ann").update(is_active=False)

    response = authorization.exchange(app, code)

    assert (response.status_code, response.json()["error"]) == (400, "invalid_grant")
    assert not ClientToken.objects.filter(owner__username="ann").exists()
