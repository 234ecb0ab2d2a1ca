"""The least a gateway on the console's stack can be: what bench/stack_floor.py serves as its floor.

daphne, Django's ASGI handler with no middleware, no application and no database, and one async
view that forwards a tools/call through the console's own upstream client (approvals/upstream, a
session kept per process) and answers as JSON. Nothing is identified, recorded, audited, decided,
validated or counted. `UPSTREAM_URL` names the upstream's /mcp; without it the view answers an echo itself,
which leaves daphne and Django alone:

    UPSTREAM_URL=http://127.0.0.1:8001/mcp daphne -p 8002 floor_app:application   (cwd bench/)
"""

import json
import os
import sys
from pathlib import Path

import django
from django.conf import settings

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
settings.configure(
    DEBUG=False,
    SECRET_KEY="floor-bench-" * 4,
    ROOT_URLCONF=__name__,
    ALLOWED_HOSTS=["127.0.0.1"],
    MIDDLEWARE=[],
    INSTALLED_APPS=[],
    DATABASES={},
)
django.setup()

from django.core.asgi import get_asgi_application  # noqa: E402
from django.http import HttpResponse, JsonResponse  # noqa: E402
from django.urls import path  # noqa: E402

from approvals.upstream import SessionPool  # noqa: E402
from approvals.upstream.pool import running_loop_pool  # noqa: E402
from approvals.upstream.spec import HTTP, ServerSpec  # noqa: E402

UPSTREAM = (
    ServerSpec(name="upstream", transport=HTTP, url=os.environ["UPSTREAM_URL"])
    if os.environ.get("UPSTREAM_URL")
    else None
)
SERVER_INFO = {"name": "floor", "version": "1"}


def answer(message: dict, result: dict, **headers) -> JsonResponse:
    return JsonResponse({"jsonrpc": "2.0", "id": message["id"], "result": result}, headers=headers)


async def mcp(request):
    message = json.loads(request.body)
    if "id" not in message:
        return HttpResponse(status=202)
    if message["method"] == "initialize":
        revision = message["params"]["protocolVersion"]
        result = {"protocolVersion": revision, "capabilities": {"tools": {}}, "serverInfo": SERVER_INFO}
        return answer(message, result, **{"Mcp-Session-Id": "floor"})
    if message["method"] != "tools/call":
        return answer(message, {})
    params = message["params"]
    if UPSTREAM is None:
        text = (params.get("arguments") or {}).get("message", "")
        return answer(message, {"content": [{"type": "text", "text": text}]})
    session = await running_loop_pool(SessionPool).get(UPSTREAM)
    return answer(message, await session.call_tool(params["name"], params.get("arguments") or {}))


urlpatterns = [path("mcp", mcp)]
application = get_asgi_application()
