"""What a web process starts once its server's event loop runs, under either server the console may run on.

granian, the server of `make run` and of the production recipe, sends ASGI lifespan events, which the console's
router hands to `lifespan`. daphne (the tests' in-thread console, tests/fixtures/live.py) sends none: it runs
its asyncio loop as twisted's reactor, installed before it imports the application, so `under_daphne` has the
reactor start the same work once the loop runs.
"""

import sys
import threading

from approvals.catalog.specs import stdio_isolation
from approvals.tasks import housekeeping
from approvals.upstream import probe


def start_with_the_server():
    """The process's periodic work (approvals.tasks.housekeeping) on the running loop, and the stdio probe: what a
    stdio server would reach of the console, found now and logged, which the server pages then show (the probe
    keeps it for the process)."""
    housekeeping.start()
    threading.Thread(target=probe.log_finding, args=(stdio_isolation(),), daemon=True).start()


async def lifespan(scope, receive, send):
    """The ASGI lifespan protocol: the start-up work at startup; at shutdown nothing waits to be done, since a
    call whose process ends is ended by another's periodic work once its lease lapses."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            start_with_the_server()
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


def under_daphne():
    """Under daphne, start the work when its reactor runs, and silence daphne's own access log, which would write
    URLs unredacted: the console writes its own (approvals.observe.logs.access_logged)."""
    if "twisted.internet.reactor" in sys.modules:
        from daphne.access import AccessLogGenerator
        from twisted.internet import reactor

        AccessLogGenerator.write_entry = lambda *entry, **fields: None
        reactor.callWhenRunning(reactor.callLater, 0, start_with_the_server)
