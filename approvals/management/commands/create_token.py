from django.core.management.base import BaseCommand, CommandError

from approvals.catalog import routes
from approvals.tokens import issuing


class Command(BaseCommand):
    help = (
        "Create a client token and print its secret once, as the last line of the output "
        "(take it with `tail -1`); only its hash is kept."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "name", help="who the token is for, e.g. 'ci-agent'; shown in the console and the audit log"
        )
        parser.add_argument(
            "--tools",
            action="append",
            metavar="GLOB",
            help="exposed tool names the token may call, e.g. 'records_*'; repeatable; default '*' (every tool)",
        )
        parser.add_argument("--owner", default="", metavar="USERNAME", help="the console user the token belongs to")
        parser.add_argument("--description", default="", help="what the token is for, shown on the tokens page")
        parser.add_argument(
            "--expires",
            default="",
            metavar="WHEN",
            help="when the gateway starts refusing it: 30d, 12h, or an ISO date or time; default never",
        )
        parser.add_argument(
            "--rate", default="", metavar="N", help="requests a minute; default MCP_RATE_LIMIT_PER_MINUTE"
        )
        parser.add_argument(
            "--max-pending",
            default="",
            metavar="N",
            help="calls waiting for a decision at once (0: no cap); default MAX_PENDING_CALLS_PER_TOKEN",
        )

    def handle(self, *args, name, tools, owner, description, expires, rate, max_pending, **options):
        globs = tools or ["*"]
        try:
            details = issuing.parse_details(owner, description, expires, rate, max_pending)
            token, secret = issuing.issue(name, globs, **details)
        except issuing.TokenError as exc:
            raise CommandError(str(exc)) from None
        reachable = routes.reachable_tools(globs)
        self.stdout.write(f"created token {token.name!r} (prefix {token.prefix}) for tools {', '.join(globs)}")
        if token.expires_at:
            self.stdout.write(f"it expires at {token.expires_at:%Y-%m-%d %H:%M %Z}")
        self.stdout.write(f"it reaches {len(reachable)} active tools now")
        if token.owner is not None:
            # Made by no person (this command), it is nobody's own: see ClientToken.person.
            self.stdout.write(
                f"{token.owner.get_username()}'s own connections are not used by this token: on a server that takes "
                "each person's own connection, only tokens a person makes or allows act as them"
            )
        self.stdout.write("the secret follows; it is shown only this once:")
        self.stdout.write(secret)
