"""When what a person may see changes, their open websockets look again.

A socket's user and role are checked when it connects; a page left open would
otherwise go on receiving every pending call's arguments after its user signed
out, was deactivated, or lost the role. A sign-out closes the sockets of the
session it ends (Django announces it before the session is gone, so a socket
looking then would still find it). Every other change tells the sockets of the
people it touches; each reads its user back from its session and closes if they
may no longer watch calls. Connected in ApprovalsConfig.ready().
"""

from importlib import import_module
from types import SimpleNamespace

from django.conf import settings
from django.contrib.auth import get_user, get_user_model
from django.contrib.auth.models import Group
from django.contrib.auth.signals import user_logged_out
from django.db.models.signals import m2m_changed, post_delete, post_save

from approvals.live import events

CHANGES = {"post_add", "post_remove", "post_clear"}


def users_regrouped(sender, instance, action, reverse, pk_set, **kwargs):
    """A user's groups or permissions changed, from either side of the relation."""
    if action in CHANGES:
        events.access_changed([instance.pk] if not reverse else list(pk_set or []))


def group_permissions_changed(sender, instance, action, reverse, pk_set, **kwargs):
    if action not in CHANGES:
        return
    groups = Group.objects.filter(pk__in=pk_set or []) if reverse else [instance]
    events.access_changed([pk for group in groups for pk in group.user_set.values_list("pk", flat=True)])


def user_saved(sender, instance, created, update_fields=None, **kwargs):
    # Deactivation, a new password (which ends the user's other sessions), superuser status;
    # not the stamp every sign-in saves.
    if not created and update_fields != frozenset({"last_login"}):
        events.access_changed([instance.pk])


def user_deleted(sender, instance, **kwargs):
    events.access_changed([instance.pk])


def logged_out(sender, request, user, **kwargs):
    if request is not None and request.session.session_key:
        events.session_ended(request.session.session_key)


def signed_in_user(session_key):
    """Whom the session names now, checked as a page request checks it: AnonymousUser once
    the session has ended or the user's password has changed since."""
    session = import_module(settings.SESSION_ENGINE).SessionStore(session_key)
    return get_user(SimpleNamespace(session=SessionAsRead(session)))


class SessionAsRead:
    """A session for get_user to read only. What it would change there (flushing a session whose
    password hash is stale, moving one to a new secret key) is left to the session's own next request:
    the user may be changing their password in that very session, which Django updates just after."""

    def __init__(self, session):
        self.session = session

    def __getitem__(self, key):
        return self.session[key]

    def get(self, key, default=None):
        return self.session.get(key, default)

    def __setitem__(self, key, value):
        pass

    def cycle_key(self):
        pass

    def flush(self):
        pass


def connect():
    User = get_user_model()
    m2m_changed.connect(users_regrouped, sender=User.groups.through, dispatch_uid="approvals.access.groups")
    m2m_changed.connect(
        users_regrouped, sender=User.user_permissions.through, dispatch_uid="approvals.access.user_permissions"
    )
    m2m_changed.connect(
        group_permissions_changed, sender=Group.permissions.through, dispatch_uid="approvals.access.group_permissions"
    )
    post_save.connect(user_saved, sender=User, dispatch_uid="approvals.access.user_saved")
    post_delete.connect(user_deleted, sender=User, dispatch_uid="approvals.access.user_deleted")
    user_logged_out.connect(logged_out, dispatch_uid="approvals.access.logged_out")
