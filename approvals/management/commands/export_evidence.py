from argparse import ArgumentTypeError
from datetime import UTC, datetime

from django.core.management.base import BaseCommand, CommandError

from approvals.audit.checkpoints import Refused
from approvals.audit_log.evidence import Empty, make_pack


def moment(text: str) -> datetime:
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise ArgumentTypeError(f"{text!r} is not an ISO 8601 date or time (2026-11-01T09:00+01:00)") from None
    return value if value.tzinfo else value.replace(tzinfo=UTC)


class Command(BaseCommand):
    help = (
        "Write an evidence pack for a period: its audit events with their signed checkpoints, the chain's "
        "verification, the policy rules and servers at its start and end, and the public key, in a zip that "
        "tools/verify_export.py FILE.zip --public-key KEY.pem checks whole."
    )

    def add_arguments(self, parser):
        parser.add_argument("--since", required=True, type=moment, help="the period's start (ISO 8601; UTC if no zone)")
        parser.add_argument("--until", required=True, type=moment, help="the period's end, excluded")
        parser.add_argument("file", help="the zip to write")

    def handle(self, *args, since, until, file, **options):
        if until <= since:
            raise CommandError("--until must come after --since")
        try:
            manifest = make_pack(file, since, until, "export_evidence command")
        except (Empty, Refused) as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(
            f"{file}: events seq {manifest['first_seq']} to {manifest['last_seq']}, "
            f"covered by the checkpoint at seq {manifest['through_seq']}"
        )
