"""People and their roles, as admins change them on the People page: each change one function, audited with who,
when, and the person before and after.

A person's credentials follow them (actions/person_access): deactivating ends every one at once, under the
admin's name; a change of roles that leaves none ends them through the signals, under the admin's name too.
"""

import secrets

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction

from approvals.actions import person_access
from approvals.audit import chain
from approvals.audit.chain import Actor
from approvals.roles import ADMIN, ROLES


class PeopleError(Exception):
    """A change an admin may not make, with why in their words."""


SUPERUSER = "A superuser holds every role; superusers are the break-glass accounts, changed in Django admin."
NO_PASSWORDS = (
    "Passwords sign in only superusers here (LOCAL_LOGIN is off): people get their account at their first SSO sign-in."
)


def roles_of(person) -> list[str]:
    return sorted(name for name in person.groups.values_list("name", flat=True) if name in ROLES)


def snapshot(person) -> dict:
    return {
        "username": person.get_username(),
        "email": person.email,
        "roles": roles_of(person),
        "is_active": person.is_active,
    }


def record(action: str, actor, person, before):
    data = {"user_id": person.pk, "before": before, "after": snapshot(person)}
    chain.record(action, Actor.user(actor), data=data)


def refuse_superuser(person):
    if person.is_superuser:
        raise PeopleError(SUPERUSER)


def set_roles(person, role_names):
    person.groups.set(Group.objects.filter(name__in=[name for name in ROLES if name in role_names]))


@transaction.atomic
def create_person(username: str, email: str, role_names, actor) -> tuple[object, str]:
    """A new person holding `role_names`, and a random password to show the admin once.

    Refused where passwords sign in no one but superusers (LOCAL_LOGIN off): SSO never links a sign-in to an account
    that exists already, so a person made here could never sign in; SSO makes theirs at their first sign-in."""
    if not settings.LOCAL_LOGIN:
        raise PeopleError(NO_PASSWORDS)
    password = secrets.token_urlsafe(18)
    person = get_user_model().objects.create_user(username, email=email, password=password)
    with person_access.acting_as(actor):
        set_roles(person, role_names)
    record("person.created", actor, person, None)
    return person, password


@transaction.atomic
def change_roles(person, role_names, actor) -> bool:
    """Give `person` exactly `role_names`; whether anything changed. Their open pages end with their old roles
    (the signals end their sessions), and a person left with none loses every credential."""
    refuse_superuser(person)
    before = snapshot(person)
    if person.pk == actor.pk and ADMIN in before["roles"] and ADMIN not in role_names:
        raise PeopleError("You cannot take the admin role from yourself; another admin can.")
    with person_access.acting_as(actor):
        set_roles(person, role_names)
    if roles_of(person) == before["roles"]:
        return False
    record("person.roles_changed", actor, person, before)
    return True


@transaction.atomic
def deactivate(person, reason: str, actor) -> person_access.Ended | None:
    """Deactivate `person` and end everything they hold; None if they were inactive already.

    Access is ended here, in the admin's name and words; the signal that saving an inactive person sends then
    finds nothing left to end, so `user.access_ended` is recorded once."""
    if person.pk == actor.pk:
        raise PeopleError("You cannot deactivate yourself; another admin can.")
    refuse_superuser(person)
    if not person.is_active:
        return None
    before = snapshot(person)
    person.is_active = False
    person.save(update_fields=["is_active"])
    ended = person_access.end_person_access(person, reason or person_access.DEACTIVATED, actor)
    record("person.deactivated", actor, person, before)
    return ended


@transaction.atomic
def reactivate(person, actor) -> bool:
    """Let `person` sign in again; what was revoked stays revoked, so they make new credentials."""
    refuse_superuser(person)
    if person.is_active:
        return False
    before = snapshot(person)
    person.is_active = True
    person.save(update_fields=["is_active"])
    record("person.reactivated", actor, person, before)
    return True
