from django.core.management.base import BaseCommand

from approvals.policy.models import PolicyRule
from approvals.policy.rule_notes import summary


class Command(BaseCommand):
    help = "List the policy rules in the order they are tried. A call no enabled rule matches is asked about."

    def handle(self, *args, **options):
        listed = PolicyRule.objects.select_related("server", "client")
        if not listed:
            self.stdout.write("no rules: every call is asked about")
            return
        for rule in listed:
            line = f"{rule.position}\t{rule.pk}\t{summary(rule)}"
            if not rule.enabled:
                line += "\t(disabled)"
            if rule.message:
                line += f"\tmessage: {rule.message}"
            self.stdout.write(line)
        self.stdout.write("then: ask (no rule matched)")
