import json

from django.core.management.base import BaseCommand, CommandError

from approvals.calls import deciding
from approvals.calls.models import Call
from approvals.management.acting import OPERATOR_VARIABLE, acting_user, host_account


class Command(BaseCommand):
    help = (
        "Approve or deny a pending call, as an operator would in the queue. The deciding user is --as, "
        f"else the username in ${OPERATOR_VARIABLE}, else the only active superuser (refused when there "
        "are several); that user needs the decide_call permission. The audit log records the host account "
        "running the command too, and one host account fills one place of a quorum, whatever --as it gives. "
        "When another decision got there first it prints who made it and exits 1."
    )

    def add_arguments(self, parser):
        parser.add_argument("call_id", type=int, metavar="CALL_ID")
        parser.add_argument("decision", choices=["approve", "deny"])
        parser.add_argument("--reason", default="", help="kept in the audit log; told to the client on a denial")
        parser.add_argument("--as", dest="username", metavar="USERNAME", help="the deciding operator")
        parser.add_argument(
            "--binding",
            metavar="DIGEST",
            help=(
                "the call's binding from `list_calls --json`: refuse if the call or its tool changed since it was read"
            ),
        )
        parser.add_argument(
            "--arguments",
            metavar="JSON",
            help="approve with these arguments instead (a JSON object, checked against the tool's schema)",
        )

    def handle(self, *args, call_id, decision, reason, username, binding, arguments, **options):
        approve = decision == "approve"
        if arguments is not None and not approve:
            raise CommandError("--arguments goes with approve: a denied call runs with no arguments at all")
        edited = parse_arguments(arguments)
        user = operator(username)
        if not Call.objects.filter(pk=call_id).exists():
            raise CommandError(f"no call {call_id}")
        outcome = deciding.decide(
            call_id,
            user,
            approve,
            reason=reason,
            edited_arguments=edited,
            shown_binding=binding,
            os_user=host_account(),
            via="command line",
        )
        if not outcome.won:
            raise CommandError(
                " ".join(
                    [f"call {call_id} was not {'approved' if approve else 'denied'}:", outcome.message, *outcome.errors]
                )
            )
        edited_note = " with edited arguments" if edited is not None else ""
        if outcome.row.status == Call.Status.PENDING:
            self.stdout.write(f"{outcome.message} (call {call_id}, {outcome.row.tool_name}, as {user.get_username()})")
            return
        self.stdout.write(
            f"{outcome.message.rstrip('.').lower()} call {call_id} ({outcome.row.tool_name}){edited_note}"
            f" as {user.get_username()}"
        )


def parse_arguments(text):
    if text is None:
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CommandError(f"--arguments is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise CommandError("--arguments must be a JSON object")
    return value


def operator(username):
    return acting_user(
        username,
        lambda user: user.has_perm("approvals.decide_call"),
        "decide calls (needs the decide_call permission, e.g. the operator role)",
    )
