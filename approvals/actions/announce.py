"""A call's or an input request's change, told to everyone who follows it.

The packages that change calls and input requests send live.events.row_changed with the
row and the live event it is, inside the transaction of the change. Here it fans out, in
that transaction: to the live groups (the request waiting on the row, the operators'
pages), to the API's event journal, to webhooks, whose delivery rows are written with
the change, to Slack, whose messages are posted and updated after commit, and to the devices
of the people a waiting call or input request asks for (notify, after commit). `connect` runs
as the app starts (approvals.apps).
"""

from approvals.actions import notify
from approvals.calls.models import Call
from approvals.calls.observed import observed
from approvals.inputs.models import InputRequest
from approvals.live import events, journal
from approvals.slack import messages as slack
from approvals.webhooks import announce as webhooks

# A call's live events and the webhook each is, when it is one.
CALL_WEBHOOKS = {"call.pending": "call.pending", "call.decided": "call.decided"}
# Ended otherwise than by a decision; a denial is call.decided.
FINISHED = {Call.Status.COMPLETED, Call.Status.FAILED, Call.Status.EXPIRED, Call.Status.CANCELLED}


def connect():
    events.row_changed.connect(call_changed, sender=Call)
    events.row_changed.connect(input_changed, sender=InputRequest)


def call_changed(sender, row: Call, event: str, decided: bool = False, **kwargs):
    events.send_call_event(row, event)
    observed(row, decided)
    journal.note(event, call_id=row.pk, status=row.status)
    slack.call_changed(row, event)
    notify.announce_call(row, event)
    if event == "call.escalated":
        webhooks.call_escalated(row)
        return
    webhook = CALL_WEBHOOKS.get(event) or ("call.finished" if row.status in FINISHED else None)
    if webhook is not None:
        webhooks.call_changed(webhook, row)


def input_changed(sender, row: InputRequest, event: str, **kwargs):
    events.send_input_event(row, event)
    journal.note(event, input_id=row.pk, call_id=row.call_id, status=row.status)
    if event == "input.pending" and row.routed_to == InputRequest.Route.OPERATOR:
        webhooks.input_requested(row)
        notify.announce_input(row)
