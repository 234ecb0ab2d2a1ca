"""Moving a call or an input request on from its status, so that of racing moves exactly one wins.

Two operators deciding one call, a decision and the expiry, a result and a
cancellation, an operator's answer and the client's: each move is a conditional
update (`WHERE status IN sources`). Only the winner writes the move's audit events,
in the same transaction, and announces it (live.events.changed); the others change
nothing and find in the re-read row what won.
"""

from dataclasses import dataclass, field

from django.db import models, transaction

from approvals.audit import chain
from approvals.audit.chain import Actor
from approvals.db import statements
from approvals.live import events


@dataclass
class Outcome:
    """What a person's move (a decision on a call, an answer to an input request) came to, and what they are told."""

    won: bool
    row: models.Model  # as it is now: moved by this move, or by the one that won
    message: str
    errors: list = field(default_factory=list)  # why the move was refused before it was tried


@transaction.atomic
def move(model: type[models.Model], pk, sources, changes: dict, *, actor: Actor, audit: dict, event: str, known=None):
    """Update row `pk` by `changes` if its status is one of `sources`: whether this move won, and the row as it is now.

    The winner records each `audit` action with its data, in order, and announces the live `event`.
    `known` is the row as the caller read it, its related rows with it: a winner then has it with `changes`
    applied rather than read again, since nothing else changes a row whose status this move holds.
    """
    # An input request's events belong to its call, and name the request.
    of_a_call = hasattr(model, "call")
    won = statements.update_if_status(model, pk, sources, changes)
    if won and known is not None:
        row = known
        for name, value in changes.items():
            setattr(row, name, value)
    else:
        row = (model.objects.select_related("call" if of_a_call else "server")).get(pk=pk)
    if won:
        call, about = (row.call, {"input_id": row.pk}) if of_a_call else (row, {})
        with chain.batch():
            for action, data in audit.items():
                chain.record(action, actor, call=call, data={**about, **data})
        events.changed(row, event, decided="decided_at" in changes)
    return won, row
