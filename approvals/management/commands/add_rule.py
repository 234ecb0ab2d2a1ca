import json

from django.core.management.base import BaseCommand, CommandError

from approvals.policy import rule_notes, rules
from approvals.policy.kinds import CallKind
from approvals.policy.models import PolicyRule


class Command(BaseCommand):
    help = (
        "Add a policy rule. Rules are tried in order and the first that matches a call decides it; "
        "the new rule goes last unless --position says otherwise. A call no rule matches is asked about; "
        "a resource read or prompt get no rule matches is allowed."
    )

    def add_arguments(self, parser):
        parser.add_argument("--action", required=True, choices=PolicyRule.Action.values)
        parser.add_argument(
            "--applies-to",
            choices=CallKind.values,
            default=CallKind.TOOL,
            help="tool calls (default); coding agents' permission requests, whose --tool is the agent's tool; "
            "resource reads, whose --tool is a URI glob; prompt gets, whose --tool is the prompt's name",
        )
        parser.add_argument("--server", metavar="NAME", help="only calls to this upstream server")
        parser.add_argument("--tool", default="*", metavar="GLOB", help="exposed tool name pattern (default '*')")
        parser.add_argument("--client", metavar="NAME", help="only calls from this client token")
        parser.add_argument("--message", default="", help="told to the client when the rule denies")
        parser.add_argument(
            "--annotation",
            action="append",
            default=[],
            metavar="KEY=true|false",
            help=(
                "a tool annotation the rule requires, e.g. readOnlyHint=true; "
                "counted for trusted servers only; repeatable"
            ),
        )
        parser.add_argument(
            "--conditions",
            metavar="JSON",
            help='argument conditions, e.g. \'[{"path": "amount", "op": "gt", "value": 100}]\'',
        )
        parser.add_argument("--position", type=int, metavar="N", help="1 puts the rule first; default: last")
        parser.add_argument("--name", default="", metavar="TEXT", help="shown in the queue as the rule that decided")
        parser.add_argument(
            "--approvals-needed",
            type=int,
            default=1,
            metavar="N",
            help="distinct operators who must approve a call the rule asks about (default 1); one denial ends it",
        )
        parser.add_argument(
            "--approval-timeout",
            type=int,
            metavar="SECONDS",
            help="how long a call the rule asks about waits for its approvals (default: APPROVAL_TIMEOUT_SECONDS)",
        )
        parser.add_argument(
            "--escalate-before",
            type=int,
            metavar="SECONDS",
            help="flag a call the rule asks about this long before it expires and send call.escalated (default: never)",
        )
        parser.add_argument(
            "--separation-of-duties",
            choices=PolicyRule.SeparationOfDuties.values,
            default=PolicyRule.SeparationOfDuties.INHERIT,
            help=(
                "require: the calling token's owner may not approve; off: they may; "
                "inherit (default): as SEPARATION_OF_DUTIES says"
            ),
        )

    def handle(self, *args, action, server, tool, client, message, annotation, conditions, position, name, **options):
        hold = {
            "approvals_needed": options["approvals_needed"],
            "approval_timeout_seconds": options["approval_timeout"],
            "escalate_before_seconds": options["escalate_before"],
            "separation_of_duties": options["separation_of_duties"],
            "applies_to": options["applies_to"],
        }
        try:
            request = rules.RuleRequest(
                action=action,
                server=server,
                tool_glob=tool,
                client=client,
                message=message,
                name=name,
                annotations=dict(rules.parse_annotation(a) for a in annotation),
                conditions=parse_conditions(conditions),
                position=position,
                **hold,
            )
            rule = rules.create_rule(request)
        except rules.RuleError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"added rule {rule.pk} at position {rule.position}: {rule_notes.summary(rule)}")
        for note in rule_notes.warnings(rule):
            self.stderr.write(f"warning: {note}")


def parse_conditions(text):
    if text is None:
        return []
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise rules.RuleError([f"--conditions is not valid JSON: {exc}"]) from None
