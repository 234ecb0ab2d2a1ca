"""/mcp for clients of either era (served by gateway.application, ahead of Django), and the protected-resource
metadata that points at it (a Django view)."""

import logging

from django.conf import settings
from django.http import Http404, JsonResponse
from django.urls import reverse
from django.views.decorators.http import require_GET
from oauth2_provider.settings import oauth2_settings

from approvals.db.sealed import CredentialsUnreadable
from approvals.gateway import auth, legacy, modern
from approvals.gateway.http import Refused, check_post_media_types, era_of, method_not_allowed, read_message, rejection
from approvals.gateway.server_info import TITLE
from approvals.oauth import scopes
from approvals.observe import logs, traces
from approvals.protocol.jsonrpc import INTERNAL_ERROR
from approvals.protocol.revisions import MODERN

log = logging.getLogger(__name__)


async def mcp_endpoint(request):
    """The answer to one request (gateway.application.McpRequest): a Response, whatever went wrong."""
    logs.bind(trace_id=traces.current_trace_id() or logs.trace_id_of(request.headers.get("traceparent", "")))
    try:
        return await serve(request)
    except Refused as refusal:
        return refusal.response
    except CredentialsUnreadable as exc:
        log.error("%s", exc)
        return rejection(503, str(exc), INTERNAL_ERROR)
    except Exception:
        # Whatever broke, the client gets a JSON-RPC error, never Django's HTML error page.
        log.exception("the MCP endpoint failed on a %s request", request.method)
        return rejection(500, "Internal error", INTERNAL_ERROR)


async def serve(request):
    if request.method not in ("GET", "POST", "DELETE"):
        return method_not_allowed()
    token = await auth.identify(request)
    if request.method == "POST":
        check_post_media_types(request)
        message = read_message(request)
        era_module = modern if era_of(request, message) == MODERN else legacy
        return await era_module.handle_post(request, token, message)
    if era_of(request, None) == MODERN:
        return rejection(405, "Method Not Allowed: this protocol revision takes POST only", headers={"Allow": "POST"})
    if request.method == "GET":
        return await legacy.open_stream(request, token)
    return await legacy.end_session(request, token)


def named_route(request):
    """/mcp never reaches Django (console.asgi hands it to gateway.application): the route is there for reverse()."""
    raise Http404


@require_GET
def resource_metadata(request):
    """RFC 9728 metadata: the console's own authorization server, unless OAUTH_SERVER is off and the
    console's client tokens are the only way in."""
    document = {
        "resource": request.build_absolute_uri(reverse("mcp_endpoint")),
        "bearer_methods_supported": ["header"],
        "resource_name": TITLE,
    }
    if settings.OAUTH_SERVER:
        document.update(
            authorization_servers=[oauth2_settings.oauth2_authorization_server_issuer(request)],
            scopes_supported=[scopes.EVERY_TOOL],
        )
    response = JsonResponse(document)
    response["Access-Control-Allow-Origin"] = "*"
    return response
