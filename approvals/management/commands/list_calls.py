import json

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from approvals.calls import lifecycle
from approvals.calls.models import Call


class Command(BaseCommand):
    help = "List calls, newest first: id, age, client, tool, status, the rule that applied, who decided."

    def add_arguments(self, parser):
        parser.add_argument("--status", choices=Call.Status.values, help="only calls in this status, e.g. pending")
        parser.add_argument("--limit", type=int, default=50, metavar="N", help="at most N calls (default 50)")
        parser.add_argument(
            "--json", action="store_true", help="one JSON document with arguments and binding, times in ISO 8601"
        )

    def handle(self, *args, status, limit, json: bool, **options):
        if limit < 1:
            raise CommandError("--limit must be at least 1")
        listed = Call.objects.select_related("token")
        if status:
            listed = listed.filter(status=status)
        rows = [row(call) for call in listed[:limit]]
        if json:
            self.stdout.write(dumps(rows))
            return
        if not rows:
            self.stdout.write(f"no {status} calls" if status else "no calls")
            return
        self.stdout.write("\t".join(["id", "age", "client", "tool", "status", "rule", "decided by"]))
        for r in rows:
            cells = [
                r["id"],
                age(r["age_seconds"]),
                r["client"],
                r["tool"],
                r["status"],
                r["rule"] or "-",
                r["decided_by"] or "-",
            ]
            self.stdout.write("\t".join(str(c) for c in cells))


def row(call):
    return {
        "id": call.pk,
        "received_at": call.received_at.isoformat(),
        "age_seconds": int((timezone.now() - call.received_at).total_seconds()),
        "client": call.token.name,
        "kind": call.kind,
        "tool": call.tool_name,
        "status": call.status,
        "rule": call.rule_name,
        "decided_by": call.decided_by_name,
        "reason": call.reason,
        "arguments": call.final_arguments,
        # What an approval binds to; `decide --binding` refuses if the call or its tool changed since.
        "binding": lifecycle.call_binding(call),
    }


def age(seconds):
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def dumps(value):
    return json.dumps(value, indent=2, ensure_ascii=False)
