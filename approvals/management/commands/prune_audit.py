from django.core.management.base import BaseCommand

from approvals import audit_retention


class Command(BaseCommand):
    help = "Delete audit events older than the retention (AUDIT_RETENTION_DAYS or the admin's setting), anchoring the chain."

    def handle(self, *args, **options):
        pruned = audit_retention.prune()
        self.stdout.write(pruned.summary() if pruned else "Retention is 0: events are kept forever.")
