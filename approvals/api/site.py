"""The JSON API under /api/v1/: its routers, its errors, its OpenAPI document and the page that renders it.

The page is Swagger UI from django-ninja's own static files: nothing comes from another origin.
"""

from functools import wraps

from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest
from ninja import NinjaAPI, Swagger
from ninja.errors import AuthenticationError, ValidationError

from approvals.api import audit, calls, inputs, stream
from approvals.api.auth import AUTH, NO_ROLE, ApiKeyAuth, require
from approvals.api.schemas import Error, Me
from approvals.roles import ROLES, can_decide, has_role

DESCRIPTION = (
    "The console's queue for programs: read pending calls and input requests, decide and answer them as "
    "yourself, follow the queue's events, search the audit log. Authenticate with a personal API key "
    "(`Authorization: Bearer mcpk_…`, made on your account page) or the browser's session (with the "
    "`X-CSRFToken` header on changes). Your roles apply: operators decide, auditors read."
)


def signed_in(view):
    """The document and its page: a user with a role, by API key or session; others go to the sign-in page."""
    key = ApiKeyAuth()

    @wraps(view)
    def checked(request: HttpRequest, *args, **kwargs):
        key(request)
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not has_role(request.user):
            return api.create_response(request, {"detail": NO_ROLE}, status=403)
        return view(request, *args, **kwargs)

    return checked


api = NinjaAPI(
    title="MCP Approval Console API",
    version="1",
    description=DESCRIPTION,
    auth=AUTH,
    urls_namespace="api-1",
    # Without deep links an operation's path is no link inside its summary's button (no nested control).
    docs=Swagger(settings={"validatorUrl": None, "persistAuthorization": False, "deepLinking": False}),
    docs_decorator=signed_in,
)
api.add_router("", calls.router)
api.add_router("", inputs.router)
api.add_router("", audit.router)
api.add_router("", stream.router)


def field_named(loc) -> str:
    """Where a problem is, as the client wrote it: `binding`, `arguments`, `min_age`, not ninja's own path."""
    parts = [str(part) for part in loc]
    if parts[:1] == ["body"]:
        return ".".join(parts[2:]) or "body"
    return parts[-1] if parts else "request"


@api.exception_handler(ValidationError)
def invalid(request, exc: ValidationError):
    errors = [f"{field_named(e.get('loc', ()))}: {e.get('msg', '')}" for e in exc.errors]
    return api.create_response(request, {"detail": "The request is not valid.", "errors": errors}, status=422)


@api.exception_handler(AuthenticationError)
def unauthenticated(request, exc):
    detail = "Sign in, or send a valid API key as Authorization: Bearer <key>."
    response = api.create_response(request, {"detail": detail}, status=401)
    response["WWW-Authenticate"] = 'Bearer realm="api"'
    return response


@api.get("/me", response={200: Me, 401: Error, 403: Error}, tags=["account"], summary="Who the API takes you for")
def me(request: HttpRequest):
    require(request)
    user = request.user
    return {
        "username": user.get_username(),
        "roles": [role for role in ROLES if user.is_superuser or user.groups.filter(name=role).exists()],
        "can_decide": can_decide(user),
        "can_read_audit": user.has_perm("approvals.view_auditevent"),
        "authenticated_by": "api_key" if getattr(request, "api_key", None) else "session",
    }
