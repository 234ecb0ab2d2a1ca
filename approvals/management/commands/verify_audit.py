import re

from django.core.management.base import BaseCommand, CommandError

from approvals.audit import verify

HEAD = re.compile(r"^(\d+):([0-9a-f]{64})$")


def exported_head(text):
    match = HEAD.match(text)
    if not match:
        raise CommandError("--expect-head takes SEQ:HASH, as written at the end of an export")
    return int(match[1]), match[2]


class Command(BaseCommand):
    help = (
        "Walk the audit chain from its anchor to its head, recomputing every hash. Names the first broken "
        "link and exits 1 on any break; the result also shows on the audit page."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--expect-head",
            metavar="SEQ:HASH",
            help="the chain head an earlier export ended with: fail unless that event is still in the chain, unchanged",
        )

    def handle(self, *args, expect_head, **options):
        expect = exported_head(expect_head) if expect_head else None
        result = verify.run("verify_audit command", expect)
        if not result.ok:
            raise CommandError(
                f"broken at seq {result.broken_seq}: {result.problem}\n"
                f"  expected {result.expected}\n"
                f"  found    {result.found}",
                returncode=1,
            )
        checked = (
            f"{result.checked} events, seq {result.first_seq} to {result.last_seq}" if result.checked else "no events"
        )
        self.stdout.write(f"ok: {checked}" + (f"; seq {expect[0]} matches the exported head" if expect else ""))
