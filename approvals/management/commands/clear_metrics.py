from django.core.management.base import BaseCommand

from approvals.observe import metrics


class Command(BaseCommand):
    help = (
        "Remove the metric files of PROMETHEUS_MULTIPROC_DIR, and nothing else there: run once as a deployment "
        "starts, before any web process or worker, so that counts start afresh rather than from processes long gone."
    )

    def handle(self, *args, **options):
        removed = metrics.clear(metrics.folder())
        self.stdout.write(f"Removed {removed} metric files from {metrics.folder()}.")
