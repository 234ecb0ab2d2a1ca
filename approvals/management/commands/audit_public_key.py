from django.core.management.base import BaseCommand

from approvals.audit import checkpoints


class Command(BaseCommand):
    help = (
        "Print the public key (PEM) that checks the audit log's signed checkpoints, as /audit/public-key.pem "
        "serves it: give it to auditors for tools/verify_export.py."
    )

    def handle(self, *args, **options):
        self.stdout.write(checkpoints.public_key_pem(), ending="")
