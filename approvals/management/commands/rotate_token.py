from django.core.management.base import BaseCommand, CommandError

from approvals.management.tokens import named_token
from approvals.tokens import changes, issuing


class Command(BaseCommand):
    help = (
        "Give a client token a new secret, printed once as the last line of the output; the old secret stays "
        "valid for the grace period, then is refused."
    )

    def add_arguments(self, parser):
        parser.add_argument("name", help="the name of the token to rotate")
        parser.add_argument(
            "--grace",
            default="0",
            metavar="DURATION",
            help="how long the old secret keeps working: 1h, 30m, 2d; default 0 (refused at once)",
        )

    def handle(self, *args, name, grace, **options):
        token = named_token(name)
        try:
            period = issuing.parse_duration(grace)
        except issuing.TokenError as exc:
            raise CommandError(str(exc)) from None
        secret = changes.rotate_token(token, period)
        if secret is None:
            raise CommandError(f"token {name!r} is revoked or has no secret; it cannot be rotated")
        token.refresh_from_db()
        self.stdout.write(f"rotated token {name!r} (new prefix {token.prefix})")
        self.stdout.write(
            f"the old secret stays valid for {grace}" if period else "the old secret is refused from now on"
        )
        self.stdout.write("the new secret follows; it is shown only this once:")
        self.stdout.write(secret)
