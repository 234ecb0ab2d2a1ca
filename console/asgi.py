import gc
import os
import sys
from pathlib import Path

from asgiref.sync import sync_to_async
from django.core.asgi import get_asgi_application

from approvals.observe import traces

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")
# Before Django loads its middleware, which tracing adds to.
traces.start()
# Worker threads run the ORM and the templates while the event loop, which holds every
# client's stream and every operator's socket, waits for the GIL behind them: a switch
# interval a tenth of the default 5 ms lets the loop answer in between.
sys.setswitchinterval(0.0005)
# Django must be set up before anything imports models.
get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.conf import settings  # noqa: E402
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler  # noqa: E402
from django.core.handlers.asgi import ASGIHandler  # noqa: E402
from django.template import engines  # noqa: E402
from django.urls import get_resolver  # noqa: E402
from granian.utils.proxies import wrap_asgi_with_proxy_headers  # noqa: E402

from approvals.gateway.application import serve_mcp  # noqa: E402
from approvals.gateway.guard import McpEndpointGuard  # noqa: E402
from approvals.gateway.origins import OwnPagesOnly  # noqa: E402
from approvals.live.events import served_by_its_loop  # noqa: E402
from approvals.observe import logs, metrics  # noqa: E402
from approvals.routing import websocket_urlpatterns  # noqa: E402
from console import lifespan  # noqa: E402

# Objects allocated (net of those freed) between two collections of the youngest generation.
YOUNG_GENERATION = 50_000


class PagesHandler(ASGIHandler):
    """Django for the operators' pages, with the page middleware run in one go in the request's thread.

    Django's own middleware can run either way; under an async handler every hook
    of theirs is a hop to a worker thread and back, a dozen per page before the
    view's own. Run as under WSGI, the whole request costs one hop.
    """

    def load_middleware(self, is_async=False):
        super().load_middleware(is_async=False)
        self._middleware_chain = sync_to_async(self._middleware_chain, thread_sensitive=True)


application = traces.served(
    logs.access_logged(
        served_by_its_loop(
            ProtocolTypeRouter(
                {
                    "http": McpEndpointGuard(endpoint=serve_mcp, pages=ASGIStaticFilesHandler(PagesHandler())),
                    # Operators' pages only: a foreign Origin or an anonymous user never gets a socket.
                    "websocket": OwnPagesOnly(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
                    "lifespan": lifespan.lifespan,
                }
            )
        )
    )
)
if settings.TRUSTED_PROXIES:
    # The client's address and scheme as the proxy in front says them (X-Forwarded-For, X-Forwarded-Proto),
    # believed from those peers only: granian has no option for it, and its own helper wraps the application.
    application = wrap_asgi_with_proxy_headers(application, trusted_hosts=settings.TRUSTED_PROXIES)


def freeze_what_start_up_made():
    """Compile the console's templates and URL map now, then keep every object made so far out of the collector's walks.

    A full garbage collection walks every object Python tracks, and in a web process
    every call and socket it holds waits meanwhile (it shows in bench/push_latency.py's
    tail). Modules, models, templates and URLs live as long as the process, so gc.freeze()
    takes them out of those walks, which then cover little more than what requests made.
    """
    engine = engines["django"]
    for directory in engine.dirs:
        for path in sorted(Path(directory).rglob("*.html")):
            engine.get_template(path.relative_to(directory).as_posix())
    get_resolver().url_patterns  # noqa: B018 reading it imports the URL configuration now
    gc.collect()
    gc.freeze()
    # A process holding thousands of calls tracks hundreds of thousands of their objects. With Python's
    # default young generation of 700 objects one page's rendering runs hundreds of collections, and one
    # in a hundred is a full one, walking all of them once they grew by a quarter: the page and every
    # socket of the process wait for that walk. A larger young generation makes such walks rare.
    gc.set_threshold(YOUNG_GENERATION, *gc.get_threshold()[1:])


freeze_what_start_up_made()
lifespan.under_daphne()
metrics.watch_this_process()
