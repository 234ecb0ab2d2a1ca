import csv
import json

from django.core.management.base import BaseCommand, CommandError

from approvals.audit_log import report


class Command(BaseCommand):
    help = (
        "Sum up a period of the audit log: decisions by operator, tool, client and outcome; approval latency "
        "(median, p95) per tool; calls that expired unanswered; rule hits; definitions accepted or rejected in review."
    )

    def add_arguments(self, parser):
        parser.add_argument("--since", default="", help="the period's start, ISO 8601 (default: a day before --until)")
        parser.add_argument("--until", default="", help="the period's end, ISO 8601 (default: now)")
        parser.add_argument("--format", choices=["json", "csv"], default="json", dest="fmt")

    def handle(self, *args, since, until, fmt, **options):
        period = report.ReportPeriod({"since": since, "until": until})
        if not period.is_valid():
            problems = [
                f"--{name}: {' '.join(errors)}" if name != "__all__" else " ".join(errors)
                for name, errors in period.errors.items()
            ]
            raise CommandError("; ".join(problems))
        built = report.build(period.cleaned_data["since"], period.cleaned_data["until"])
        if fmt == "json":
            self.stdout.write(json.dumps(built.as_dict(), indent=2, ensure_ascii=False))
            return
        writer = csv.DictWriter(self.stdout, report.CSV_COLUMNS, restval="", lineterminator="\n")
        writer.writeheader()
        writer.writerows(report.csv_rows(built))
