from functools import wraps

from django.contrib.auth.decorators import login_required
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
