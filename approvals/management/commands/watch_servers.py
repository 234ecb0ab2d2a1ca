import asyncio
import signal

from django.core.management.base import BaseCommand

from approvals.catalog.upstream_notifications import watch


class Command(BaseCommand):
    help = "Keep a session open to every enabled upstream server and sync its tools when it announces a change."

    def add_arguments(self, parser):
        parser.add_argument(
            "--interval", type=float, default=30.0, help="seconds between health pings and re-reading the server list"
        )

    def handle(self, *args, interval, **options):
        asyncio.run(self.run(interval))

    async def run(self, interval):
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        self.stdout.write(f"watching enabled servers; re-reading every {interval:g}s")
        await watch(stop, interval)
