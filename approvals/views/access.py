from functools import wraps

from django.contrib.auth.decorators import login_required, permission_required
from django.core.exceptions import PermissionDenied

from approvals.roles import is_admin


def admin_required(view):
    """Signed-in users who are not admins are refused with 403, not sent to the login page."""

    @wraps(view)
    def checked(request, *args, **kwargs):
        if not is_admin(request.user):
            raise PermissionDenied("Only admins manage upstream servers.")
        return view(request, *args, **kwargs)

    return login_required(checked)


def permission_or_403(perm):
    """Anonymous users go to the login page; signed-in users without `perm` get 403."""

    def decorate(view):
        return login_required(permission_required(perm, raise_exception=True)(view))

    return decorate
