import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from approvals.policy import rule_files, rules


class Command(BaseCommand):
    help = (
        "Apply a rule file written by export_rules, in one transaction, after checking all of it: a rule whose "
        "uid exists is updated, any other is added after the current rules. With --replace the rules become "
        "exactly the file's, in its order. A file with any problem changes nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", metavar="FILE", help="the rule file, or - for standard input")
        parser.add_argument("--replace", action="store_true", help="delete the rules the file does not name")

    def handle(self, *args, file, replace, **options):
        try:
            text = sys.stdin.read() if file == "-" else Path(file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"cannot read {file}: {exc}") from None
        try:
            result = rule_files.import_rules(rule_files.read_rules_file(text), replace)
        except rules.RuleError as exc:
            raise CommandError("nothing imported:\n" + "\n".join(exc.errors)) from None
        self.stdout.write(", ".join(f"{count} {what}" for what, count in result.counts().items()))
