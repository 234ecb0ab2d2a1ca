"""Who is asking the API: a personal API key, or the browser's session (with its CSRF token for changes).

Either way the request acts as that user, with the user's roles; a request with
neither is refused with 401, and a user whose roles do not allow it with 403.
"""

from django.conf import settings
from django.http import HttpRequest
from ninja.errors import HttpError
from ninja.security import APIKeyCookie, HttpBearer
from ninja.utils import check_csrf

from approvals.api import keys
from approvals.roles import has_role

SAFE_METHODS = {"GET", "HEAD", "OPTIONS", "TRACE"}
NO_ROLE = "Your account holds no role in the console; an admin can give it one."
READ_ONLY = "This API key is read-only: it reads the queue and the audit log, and decides or answers nothing."


class ApiKeyAuth(HttpBearer):
    """`Authorization: Bearer mcpk_…`: a key made on the user's own page; a read-only key changes nothing."""

    def authenticate(self, request: HttpRequest, token: str):
        key = keys.key_of(token)
        if key is None:
            return None
        if key.read_only and request.method not in SAFE_METHODS:
            raise HttpError(403, READ_ONLY)
        request.user, request.api_key = key.user, token
        return key.user


class BrowserSessionAuth(APIKeyCookie):
    """The signed-in browser's session cookie; a change must carry the CSRF token (X-CSRFToken) as a form would."""

    param_name = settings.SESSION_COOKIE_NAME

    def _get_key(self, request: HttpRequest):
        return request.COOKIES.get(self.param_name)

    def authenticate(self, request: HttpRequest, key):
        if key is None or not request.user.is_authenticated:
            return None
        if request.method not in SAFE_METHODS and check_csrf(request) is not None:
            raise HttpError(403, "CSRF check failed: send the csrftoken cookie's value as the X-CSRFToken header.")
        return request.user


AUTH = [ApiKeyAuth(), BrowserSessionAuth()]


def require(request: HttpRequest, perm: str | None = None, refusal: str = ""):
    """Refuse with 403 a user who holds no role, or lacks `perm`."""
    if not has_role(request.user):
        raise HttpError(403, NO_ROLE)
    if perm is not None and not request.user.has_perm(perm):
        raise HttpError(403, refusal or "Your role does not allow this.")
