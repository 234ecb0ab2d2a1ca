from django.core.management.base import BaseCommand, CommandError

from approvals.actions import revocation
from approvals.management.tokens import named_token


class Command(BaseCommand):
    help = (
        "Revoke a client token: from now on the gateway refuses its secret, and its calls that wait for a decision "
        "are cancelled. Exits 1 if it was revoked already."
    )

    def add_arguments(self, parser):
        parser.add_argument("name")

    def handle(self, *args, name, **options):
        token = named_token(name)
        if not revocation.revoke_token(token):
            raise CommandError(f"token {name!r} was revoked already, at {token.revoked_at:%Y-%m-%d %H:%M %Z}")
        self.stdout.write(f"revoked token {name!r}; clients using it are refused from now on")
