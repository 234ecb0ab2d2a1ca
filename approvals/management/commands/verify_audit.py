import re

from django.core.management.base import BaseCommand, CommandError

from approvals.actions import verification
from approvals.audit import verify, witness
from approvals.audit.chain import Actor

RUN_BY = "verify_audit command"
HEAD = re.compile(r"^(\d+):([0-9a-f]{64})$")


def exported_head(text):
    match = HEAD.match(text)
    if not match:
        raise CommandError("--expect-head takes SEQ:HASH, as written at the end of an export")
    return int(match[1]), match[2]


class Command(BaseCommand):
    help = (
        "Walk the audit chain from its anchor to its head, recomputing every hash. Names the first broken "
        "link and exits 1 on any break, 2 when it cannot verify (the witness store does not answer); the result "
        "also shows on the audit page."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--reset-witness",
            action="store_true",
            help="after a restore from a backup: accept its head as the witnessed one (audited), then verify",
        )
        parser.add_argument(
            "--expect-head",
            metavar="SEQ:HASH",
            help="the chain head an earlier export ended with: fail unless that event is still in the chain, unchanged",
        )

    def handle(self, *args, expect_head, reset_witness, **options):
        expect = exported_head(expect_head) if expect_head else None
        if reset_witness:
            try:
                event = verify.reset_witness(Actor("system", None, RUN_BY))
            except witness.Unreachable as exc:
                raise CommandError(f"the witness was not reset: {exc}", returncode=2) from None
            self.stdout.write(f"witness reset to seq {event.seq} (audit.witness_reset)")
        result = verification.run(RUN_BY, expect)
        if not result.ok and result.broken_seq is None:
            raise CommandError(f"not verified: {result.problem}", returncode=2)
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
