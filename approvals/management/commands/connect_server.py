import time

from django.core.management.base import BaseCommand, CommandError

from approvals.catalog import sync
from approvals.catalog.models import Server
from approvals.upstream import UpstreamError
from approvals.upstream_oauth import server_tokens
from approvals.upstream_oauth.connecting import ConnectError, console_url, flow_of, start_connect
from approvals.upstream_oauth.models import UpstreamAuthorization

# How often the database is read for the browser's return, which any console process may receive.
POLL_SECONDS = 0.5


class Command(BaseCommand):
    help = (
        "Connect a server that requires OAuth: print the authorization URL (the first line), wait until a browser "
        "has come back to the console's callback, then sync the server."
    )

    def add_arguments(self, parser):
        parser.add_argument("name", help="the server's name or slug")
        parser.add_argument("--scope", default="", help="the scope to ask for (default: as the server says)")
        parser.add_argument("--timeout", type=float, default=300.0, help="seconds to wait for the browser (300)")

    def handle(self, *args, name, scope, timeout, **options):
        server = Server.objects.filter(name=name).first() or Server.objects.filter(slug=name).first()
        if server is None:
            raise CommandError(f"no server named {name!r}")
        if server.oauth == Server.OAuth.CLIENT_CREDENTIALS:
            try:
                server_tokens.client_credentials(server, anew=True)
            except UpstreamError as exc:
                raise CommandError(f"{server.name}: the client credentials grant failed: {exc.message}") from None
            self.stdout.write(f"{server.name} uses client credentials: a token was obtained without a browser")
            return self.synced(server)
        try:
            url = start_connect(server, base_url=console_url(), scope=scope)
        except ConnectError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(url)
        self.stdout.flush()
        flow = flow_of(url)
        deadline = time.monotonic() + timeout
        while flow.finished_at is None:
            if time.monotonic() >= deadline:
                raise CommandError(f"no browser came back to the console within {timeout:g}s")
            time.sleep(POLL_SECONDS)
            flow.refresh_from_db(fields=["finished_at", "outcome"])
        if flow.outcome != UpstreamAuthorization.CONNECTED:
            raise CommandError(f"{server.name} was not connected: {flow.outcome}")
        self.stdout.write(f"connected {server.name}")
        server.refresh_from_db()  # connecting may have changed how it is reached (its OAuth)
        self.synced(server)

    def synced(self, server):
        report = sync.sync_server(server)
        self.stdout.write(report.summary())
        if not report.ok:
            raise CommandError(f"connected, but the sync failed: {report.error}")
