"""The permission decorators every page wears (signed in with a role, an admin, or holding a permission; else 403),
and the mark a live page carries."""

from functools import wraps

from django.contrib.auth.decorators import login_required, permission_required
from django.core.exceptions import PermissionDenied

from approvals.live import marks
from approvals.roles import has_role, is_admin


def refused_unless(test, message):
    """A decorator that answers 403 with `message` to a user for whom `test` is false."""

    def decorate(view):
        @wraps(view)
        def checked(request, *args, **kwargs):
            if not test(request.user):
                raise PermissionDenied(message)
            return view(request, *args, **kwargs)

        return checked

    return decorate


def role_required(view):
    """Every page of the console: anonymous visitors go to the login page, signed-in users without a role get 403.

    Signing in is not enough: an account an admin made and never gave a role must see nothing.
    """
    no_role = "Your account holds no role in the console; an admin can give it one."
    return login_required(refused_unless(has_role, no_role)(view))


def admin_required(view):
    """Signed-in users who are not admins are refused with 403, not sent to the login page."""
    return role_required(refused_unless(is_admin, "Only admins manage upstream servers.")(view))


def permission_or_403(perm):
    """Anonymous users go to the login page; signed-in users without a role or without `perm` get 403."""

    def decorate(view):
        return role_required(permission_required(perm, raise_exception=True)(view))

    return decorate


def live_page(view):
    """A page the operators' socket keeps live: the state it is read from is marked before it reads anything it shows
    (`request.live_since`, which base.html hands the page's script), so that its socket, once listening, can tell it
    whether anything happened in between (live/marks). Worn inside the permission decorator: a refused request
    reads nothing."""

    @wraps(view)
    def marked(request, *args, **kwargs):
        request.live_since = marks.now()
        return view(request, *args, **kwargs)

    return marked
