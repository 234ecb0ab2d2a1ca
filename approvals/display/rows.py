"""The call fragments that pages render on load and the websocket pushes on change: one template each."""

from django.conf import settings
from django.http import HttpRequest
from django.template.loader import render_to_string

from approvals.calls.models import Call

QUEUE_ROW = "approvals/_queue_row.html"
QUEUE_GROUP = "approvals/_queue_group.html"
RECENT_ROW = "approvals/_recent_row.html"
CALL_BODY = "approvals/_call_body.html"
HEALTH = "approvals/_health.html"
RECENT_LIMIT = 100


def shown_calls():
    return Call.objects.select_related("tool__server", "server", "token__owner", "rule")


def pending_calls():
    """The queue: oldest first, so the call closest to expiring is on top."""
    return shown_calls().filter(status=Call.Status.PENDING).order_by("received_at", "pk")


def pending_count() -> int:
    return Call.objects.filter(status=Call.Status.PENDING).count()


def recent_calls(statuses: list[str]):
    calls = shown_calls()
    if statuses:
        calls = calls.filter(status__in=statuses)
    return calls.order_by("-received_at", "-pk")[:RECENT_LIMIT]


def chosen_statuses(values) -> list[str]:
    return [value for value in values if value in Call.Status.values]


def fragment_request(user, cookies: dict) -> HttpRequest:
    """A stand-in request for rendering outside a view: the user's permissions and CSRF secret, nothing else."""
    request = HttpRequest()
    request.user = user
    secret = cookies.get(settings.CSRF_COOKIE_NAME)
    if secret:
        request.META["CSRF_COOKIE"] = secret
    return request


def render_fragment(template: str, request, **context) -> str:
    return render_to_string(template, context, request=request)
