import json

from django.core.management.base import BaseCommand

from approvals.policy import rule_files


class Command(BaseCommand):
    help = (
        "Print every policy rule, in the order they are tried, as a JSON rule file for import_rules. "
        "Each rule keeps its uid, so importing the file again updates the same rules."
    )

    def handle(self, *args, **options):
        self.stdout.write(json.dumps(rule_files.export_rules(), indent=2, ensure_ascii=False))
