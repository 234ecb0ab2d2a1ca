"""The console as an installable web app: its manifest and its service worker, served from the site's root so that
the worker's scope covers every page (a worker under /static/ could control only /static/)."""

from pathlib import Path

from django.conf import settings
from django.http import HttpResponse, JsonResponse
from django.templatetags.static import static
from django.views.decorators.http import require_GET

WORKER = Path(settings.BASE_DIR) / "static" / "service-worker.js"


@require_GET
def service_worker(request):
    response = HttpResponse(WORKER.read_bytes(), content_type="text/javascript; charset=utf-8")
    # A browser checks for a new worker on navigation; an old one must not linger in caches between.
    response["Cache-Control"] = "no-cache"
    return response


@require_GET
def manifest(request):
    icons = [
        {"src": static(f"icons/icon-{size}.png"), "sizes": f"{size}x{size}", "type": "image/png", "purpose": "any"}
        for size in (192, 512)
    ]
    icons.append(
        {"src": static("icons/icon-maskable-512.png"), "sizes": "512x512", "type": "image/png", "purpose": "maskable"}
    )
    body = {
        "name": "MCP Approval Console",
        "short_name": "Approvals",
        "description": "Approve or deny the tool calls that wait for a person.",
        "start_url": "/queue/",
        "scope": "/",
        "display": "standalone",
        "background_color": "#ffffff",
        "theme_color": "#2456c7",
        "icons": icons,
    }
    return JsonResponse(body, content_type="application/manifest+json")
