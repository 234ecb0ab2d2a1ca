"""A person's access to the console ending: every credential they hold stops at once, audited once.

`end_person_access` is the one way it ends. The signals connected here call it wherever a person can lose their
access, whoever changes them (Django admin, a shell, a bulk action): deactivated, left without a role, or deleted.
SSO calls it when the identity provider gives a person no role (signin/sso). A change of a person's groups that
leaves them a role ends their browser sessions, so that no page goes on with the roles it was opened with.
"""

import contextlib
import contextvars
import functools
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction
from django.db.models.signals import m2m_changed, post_save, pre_delete
from django.utils import timezone

from approvals.actions.revocation import end_calls_and_grant
from approvals.audit import chain
from approvals.db.sessions import end_sessions_of
from approvals.live import events
from approvals.oauth import consent_tokens
from approvals.roles import has_role
from approvals.tokens.credentials import actor_of
from approvals.tokens.models import ClientToken

DEACTIVATED = "the person was deactivated"
NO_ROLE = "the person holds no role"
REFUSED_BY_PROVIDER = "the identity provider gives the person no role"
DELETED = "the person was deleted"

# Who is changing people in this context (Django admin sets it), for the audit event a signal leads to.
_acting = contextvars.ContextVar("acting", default=None)


@dataclass
class Ended:
    """What ended: the client tokens and API keys by name, and how many of the rest."""

    client_tokens: list[str]
    api_keys: list[str]
    refresh_tokens: int
    authorization_codes: int
    sessions: int
    calls_cancelled: int

    def __bool__(self):
        return any(vars(self).values())

    def facts(self) -> dict:
        return dict(vars(self))


@transaction.atomic
def end_person_access(person, reason: str, actor=None) -> Ended:
    """Stop at once everything by which `person` acts in the console, and say what it was.

    Their client tokens are revoked, those OAuth grants stand for among them, and the calls waiting on them
    cancelled, each client told `reason`; their API keys are revoked, their OAuth refresh tokens revoked and the
    authorization codes they were given deleted; their browser sessions end and their open pages and event streams
    close. `reason` is a short phrase (one of this module's, or the admin's own words); `actor` is the user who
    ended the access, None for the system. One audit event, `user.access_ended`, names the person, the reason and
    what ended; when nothing was left to end there is none, so calling this again is harmless. What it revokes
    stays revoked: a person given their access back makes new credentials.
    """
    by, now = actor_of(actor), timezone.now()
    tokens = list(ClientToken.objects.select_for_update().filter(owner=person, revoked_at__isnull=True).order_by("pk"))
    ClientToken.objects.filter(pk__in=[token.pk for token in tokens]).update(revoked_at=now)
    keys = person.api_keys.filter(revoked_at__isnull=True)
    key_names = [f"{name} ({prefix}…)" for name, prefix in keys.values_list("name", "prefix")]
    keys.update(revoked_at=now)
    oauth = consent_tokens.end_grants_of(person)
    sessions = end_sessions_of(person.pk)
    # As revoke_token does: the calls' rows are locked before the audit head, appended to once at the end.
    with chain.batch():
        cancelled = sum(end_calls_and_grant(token, f"the client token was revoked: {reason}", by) for token in tokens)
        ended = Ended(
            [token.name for token in tokens], key_names, sessions=sessions, calls_cancelled=cancelled, **oauth
        )
        if ended:
            data = {"user_id": person.pk, "username": person.get_username(), "reason": reason, **ended.facts()}
            chain.record("user.access_ended", by, data=data)
    events.access_changed([person.pk])
    return ended


@contextlib.contextmanager
def acting_as(user):
    """Within, access that the signals end is ended by `user`."""
    reset = _acting.set(user)
    try:
        yield
    finally:
        _acting.reset(reset)


def review(user_pk, regrouped: bool, actor):
    """After a change to a person has committed: end their access if it left them inactive or without a role; else,
    if their groups changed, end their sessions."""
    person = get_user_model().objects.filter(pk=user_pk).first()
    if person is None:
        return
    reason = DEACTIVATED if not person.is_active else None if has_role(person) else NO_ROLE
    if reason is not None:
        end_person_access(person, reason, actor)
    elif regrouped and end_sessions_of(user_pk):
        events.access_changed([user_pk])


def review_after_commit(user_pks, regrouped: bool):
    # Not at once: a change of groups removes the old before adding the new, and a person between the two holds
    # no role. Until the change commits and this runs, the credentials' own checks see the person as they stand.
    for pk in set(user_pks):
        transaction.on_commit(functools.partial(review, pk, regrouped, _acting.get()))


def user_saved(sender, instance, created, update_fields=None, **kwargs):
    if not created and update_fields != frozenset({"last_login"}):
        review_after_commit([instance.pk], regrouped=False)


def users_regrouped(sender, instance, action, reverse, pk_set, **kwargs):
    if action in ("post_add", "post_remove"):
        review_after_commit(pk_set if reverse else [instance.pk], regrouped=True)
    elif action == "pre_clear":
        review_after_commit(instance.user_set.values_list("pk", flat=True) if reverse else [instance.pk], True)


def group_changed(sender, instance, **kwargs):
    # A role is a group's name: renaming or deleting a group takes its role from its members.
    review_after_commit(instance.user_set.values_list("pk", flat=True), regrouped=True)


def user_deleting(sender, instance, **kwargs):
    # Before the deletion leaves the person's client tokens owned by nobody.
    end_person_access(instance, DELETED, _acting.get())


def connect():
    User = get_user_model()
    post_save.connect(user_saved, sender=User, dispatch_uid="approvals.person_access.user_saved")
    m2m_changed.connect(users_regrouped, sender=User.groups.through, dispatch_uid="approvals.person_access.groups")
    post_save.connect(group_changed, sender=Group, dispatch_uid="approvals.person_access.group_saved")
    pre_delete.connect(group_changed, sender=Group, dispatch_uid="approvals.person_access.group_deleted")
    pre_delete.connect(user_deleting, sender=User, dispatch_uid="approvals.person_access.user_deleted")
