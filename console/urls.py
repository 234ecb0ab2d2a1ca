from django.contrib import admin
from django.urls import include, path

from approvals.api.site import api
from approvals.gateway import endpoint

urlpatterns = [
    path("admin/", admin.site.urls),
    path("mcp", endpoint.mcp_endpoint, name="mcp_endpoint"),
    path("api/v1/", api.urls),
    # RFC 9728: clients look first under the resource's own path, then at the root.
    path(".well-known/oauth-protected-resource/mcp", endpoint.resource_metadata),
    path(".well-known/oauth-protected-resource", endpoint.resource_metadata, name="mcp_resource_metadata"),
    path("", include("approvals.urls")),
]
