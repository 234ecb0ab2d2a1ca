"""Moving a call or an input request on from its status, so that of racing moves exactly one wins.

Two operators deciding one call, a decision and the expiry, a result and a
cancellation, an operator's answer and the client's: each move is a conditional
update (`WHERE status IN sources`). Only the winner writes the move's audit events,
in the same transaction, and announces it to the live groups after commit; the
others change nothing and find in the re-read row what won.
"""

import logging
from dataclasses import dataclass, field

from django.db import transaction

from approvals.audit import chain
from approvals.audit.chain import Actor
from approvals.live import events
from approvals.models import Call, InputRequest
from approvals.observe import metrics

log = logging.getLogger(__name__)


@dataclass
class Outcome:
    """What a person's move (a decision on a call, an answer to an input request) came to, and what they are told."""

    won: bool
    row: Call | InputRequest  # as it is now: moved by this move, or by the one that won
    message: str
    errors: list = field(default_factory=list)  # why the move was refused before it was tried


@transaction.atomic
def move(
    model: type[Call] | type[InputRequest], pk, sources, changes: dict, *, actor: Actor, audit: dict, event: str
) -> tuple[bool, Call | InputRequest]:
    """Update row `pk` by `changes` if its status is one of `sources`: whether this move won, and the row as it is now.

    The winner records each `audit` action with its data, in order, and sends the live `event`.
    An input request's events belong to its call and carry its id.
    """
    won = bool(model.objects.filter(pk=pk, status__in=sources).update(**changes))
    if model is InputRequest:
        row = InputRequest.objects.select_related("call").get(pk=pk)
        call, about, announce = row.call, {"input_id": row.pk}, events.input_changed
    else:
        row = call = Call.objects.select_related("server").get(pk=pk)
        about, announce = {}, events.call_changed
    if won:
        with chain.batch():
            for action, data in audit.items():
                chain.record(action, actor, call=call, data={**about, **data})
        announce(row, event)
        if model is Call:
            observed(row, decided="decided_at" in changes)
    return won, row


def observed(call: Call, decided: bool):
    """The metrics and the log line of a call that was just decided (by a rule or an operator) or ended, once that
    commits."""
    if decided:
        metrics.call_decided(call.policy_action, (call.decided_at - call.received_at).total_seconds())
    if call.status in Call.FINAL:
        server = call.server.name if call.server else ""
        metrics.call_ended(server, call.status)
        fields = {"call_id": call.pk, "server": server, "tool": call.tool_name, "outcome": call.status}
        transaction.on_commit(lambda: log.info("call %s %s", call.pk, call.status, extra=fields), robust=True)
