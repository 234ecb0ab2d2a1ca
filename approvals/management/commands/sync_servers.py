from django.core.management.base import BaseCommand, CommandError

from approvals.catalog import sync
from approvals.catalog.models import Server


class Command(BaseCommand):
    help = "Sync the tools of the named servers (all enabled servers when none is named)."

    def add_arguments(self, parser):
        parser.add_argument("names", nargs="*")

    def handle(self, *args, names, **options):
        if names:
            found = {s.name: s for s in Server.objects.filter(name__in=names)}
            missing = [n for n in names if n not in found]
            if missing:
                raise CommandError(f"no server named {', '.join(map(repr, missing))}")
            targets = [found[n] for n in names]
        else:
            targets = list(Server.objects.filter(enabled=True))
        failed = 0
        for server in targets:
            report = sync.sync_server(server)
            failed += not report.ok
            self.stdout.write(report.summary())
        if failed:
            raise CommandError(f"{failed} of {len(targets)} servers failed to sync")
