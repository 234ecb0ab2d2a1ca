from django.core.management.base import BaseCommand, CommandError

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

    def handle(self, *args, name, tools, **options):
        globs = tools or ["*"]
        try:
            token, secret = issuing.issue(name, globs)
        except issuing.TokenError as exc:
            raise CommandError(str(exc)) from None
        reachable = issuing.reachable_tools(globs)
        self.stdout.write(f"created token {token.name!r} (prefix {token.prefix}) for tools {', '.join(globs)}")
        self.stdout.write(f"it reaches {len(reachable)} active tools now")
        self.stdout.write("the secret follows; it is shown only this once:")
        self.stdout.write(secret)
