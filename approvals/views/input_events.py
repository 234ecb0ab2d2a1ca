"""Input requests on the operators' websocket: the queue gets the request's row, the call's page its new body.

Mixed into consumers.OperatorConsumer, whose `view`, `call_id`, stand-in `request`
and `call_event` it uses. The row travels as `input_html`, so that the queue's
script places it among the input requests rather than by a call's group.
"""

from django.urls import reverse

from approvals.db.consumer_db import db_sync_to_async
from approvals.display import input_cards, rows


class InputEvents:
    async def input_event(self, event):
        if self.view == "queue":
            await self.send_json(await db_sync_to_async(self.input_payload)(event))
        elif self.view == "call" and self.call_id == event["call_id"]:
            await self.call_event({"event": event["event"], "call_id": event["call_id"]})

    def input_payload(self, event) -> dict:
        request = input_cards.shown_inputs().filter(pk=event["input_id"]).first()
        html = (
            rows.render_fragment(input_cards.INPUT_ROW, self.request, input=request, next=reverse("queue"))
            if request
            else ""
        )
        return {
            "event": event["event"],
            "input_id": event["input_id"],
            "input_call_id": event["call_id"],
            "input_html": html,
        }
