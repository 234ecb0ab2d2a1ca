from django.core.management.base import BaseCommand

from approvals.audit import retention


class Command(BaseCommand):
    help = (
        "Delete audit events older than the retention (AUDIT_RETENTION_DAYS or the admin's setting), "
        "anchoring the chain."
    )

    def handle(self, *args, **options):
        pruned = retention.prune()
        self.stdout.write(pruned.summary() if pruned else "Retention is 0: events are kept forever.")
