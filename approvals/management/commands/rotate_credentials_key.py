from django.core.management.base import BaseCommand, CommandError

from approvals.db.sealed import CredentialsUnreadable, reseal_all


class Command(BaseCommand):
    help = (
        "Re-encrypt every credential the database keeps under the first key of CREDENTIALS_KEY. Rotate by setting "
        'CREDENTIALS_KEY to "new,old", running this, then setting it to "new" alone.'
    )

    def handle(self, *args, **options):
        try:
            rewritten = reseal_all()
        except CredentialsUnreadable as exc:
            raise CommandError(f"{exc} Nothing was changed.") from None
        for model, count in rewritten.items():
            self.stdout.write(f"{model}: {count} rows re-encrypted")
