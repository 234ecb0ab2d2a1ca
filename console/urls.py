from django.contrib import admin
from django.urls import include, path

from approvals.api.site import api
from approvals.gateway import endpoint
from approvals.views import app, oauth, upstream_oauth

oauth_urlpatterns = [
    path(".well-known/oauth-authorization-server", oauth.metadata, name="oauth-server-metadata"),
    path(".well-known/openid-configuration", oauth.metadata),
    path("oauth/authorize/", oauth.consent, name="authorize"),
    path("oauth/token/", oauth.tokens, name="token"),
    path("oauth/register/", oauth.registration, name="dcr-register"),
    path(
        "oauth/register/<str:client_id>/",
        oauth.registration_management,
        name="dcr-register-management",
    ),
]

urlpatterns = [
    path("admin/", admin.site.urls),
    path("mcp", endpoint.named_route, name="mcp_endpoint"),
    path("api/v1/", api.urls),
    # RFC 9728: clients look first under the resource's own path, then at the root.
    path(".well-known/oauth-protected-resource/mcp", endpoint.resource_metadata),
    path(".well-known/oauth-protected-resource", endpoint.resource_metadata, name="mcp_resource_metadata"),
    # The console as an OAuth client of upstream servers (docs/upstream-oauth.md): open to any browser, since the
    # callback is bound to its flow by `state`, and the metadata document is public by nature.
    path("oauth/upstream/callback", upstream_oauth.callback, name="upstream_oauth_callback"),
    path("oauth/upstream/client-metadata.json", upstream_oauth.client_metadata, name="upstream_client_metadata"),
    # The console as an installable web app (docs/notifications.md): open to any browser, as a browser fetches a
    # manifest without cookies; at the root, so that the service worker's scope is the whole console.
    path("manifest.webmanifest", app.manifest, name="web_manifest"),
    path("service-worker.js", app.service_worker, name="service_worker"),
    # The authorization server (docs/oauth.md), under the names django-oauth-toolkit reverses.
    path("", include((oauth_urlpatterns, "oauth2_provider"))),
    path("", include("approvals.urls")),
]
