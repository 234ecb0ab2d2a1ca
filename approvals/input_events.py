"""Input requests on the operators' websocket: each event re-reads its request and pushes the queue's card.

Mixed into consumers.OperatorConsumer, whose `view` and stand-in `request` it uses.
The card travels as `input_html`, so that pages which show no input requests
(and their script, which places call rows by `html`) leave the message alone.
"""

from channels.db import database_sync_to_async
from django.urls import reverse

from approvals.views import inputs, rows


class InputEvents:
    async def input_event(self, event):
        if self.view == "queue":
            await self.send_json(await database_sync_to_async(self.input_payload)(event))

    def input_payload(self, event) -> dict:
        request = inputs.shown_inputs().filter(pk=event["input_id"]).first()
        html = rows.render_fragment(inputs.INPUT_CARD, self.request, input=request, next=reverse("queue")) if request else ""
        return {"event": event["event"], "input_id": event["input_id"], "input_call_id": event["call_id"], "input_html": html}
