"""The operators' websocket: each event re-reads what it names and pushes the fragment the page shows.

A page says what it shows in the query string (view=queue, view=recent with
status filters, view=call with id); every page also gets the pending count.
Fragments are rendered for this connection's user with the page's own
templates, so a pushed row and a reloaded row are the same markup.
"""

import asyncio
from urllib.parse import parse_qs

from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings

from approvals import roles
from approvals.catalog import review
from approvals.display import rows
from approvals.display.queue import QueueFilter, arriving_group, group_key, pending_counts
from approvals.live import access, events
from approvals.live.consumer_db import KeepsItsConnection, db_sync_to_async
from approvals.live.input_events import InputEvents
from approvals.models import Call, Server

QUEUE, RECENT, CALL = "queue", "recent", "call"
# Closed because the user may no longer watch calls: the page reloads, to the sign-in page or a refusal.
ACCESS_ENDED = 4403
# A call leaves the queue only on these; a forwarded or finished call had left it already.
COUNT_CHANGES = {"call.pending", "call.decided", "call.expired", "call.cancelled"}
# On the queue a decided or ended call keeps its row and only its actions change. They need the
# call's own row alone: reading it with its tool, server and client would compete with forwarding
# that very call when it runs in the same process.
ACTIONS_CHANGES = {"call.decided", "call.finished", "call.expired", "call.cancelled"}


class OperatorConsumer(KeepsItsConnection, InputEvents, AsyncJsonWebsocketConsumer):
    async def connect(self):
        user = self.scope.get("user")
        if user is None or not await db_sync_to_async(roles.can_view_calls)(user):
            # Closing before accepting refuses the handshake (HTTP 403).
            await self.close()
            return
        query = parse_qs(self.scope.get("query_string", b"").decode("latin-1"))
        self.view = (query.get("view") or [""])[0]
        self.statuses = rows.chosen_statuses(query.get("status", []))
        self.queue_filter = QueueFilter.from_query({name: values[0] for name, values in query.items()})
        self.call_id = int(query["id"][0]) if self.view == CALL and query.get("id", [""])[0].isdigit() else None
        self.request = rows.fragment_request(user, self.scope.get("cookies", {}))
        self.live_groups = [events.OPERATORS, events.user_group(user.pk)]
        session = self.scope.get("session")
        if session is not None and session.session_key:
            self.live_groups.append(events.session_group(session.session_key))
        for group in self.live_groups:
            await self.channel_layer.group_add(group, self.channel_name)
        await self.accept()
        self.rechecks = asyncio.ensure_future(self.recheck_access_now_and_then())

    async def disconnect(self, code):
        for group in getattr(self, "live_groups", []):
            await self.channel_layer.group_discard(group, self.channel_name)
        if getattr(self, "rechecks", None) is not None:
            self.rechecks.cancel()

    async def recheck_access_now_and_then(self):
        # Through the socket's own channel, so that the check takes its turn among the events.
        while True:
            await asyncio.sleep(settings.SOCKET_ACCESS_RECHECK_SECONDS)
            await self.channel_layer.send(self.channel_name, {"type": "access.changed"})

    async def access_changed(self, event):
        session = self.scope.get("session")
        user = await db_sync_to_async(access.signed_in_user)(session.session_key if session else None)
        if not await db_sync_to_async(roles.can_view_calls)(user):
            await self.access_ended(event)
            return
        # Still allowed, perhaps in another role: what is pushed from now on is rendered for that.
        self.request = rows.fragment_request(user, self.scope.get("cookies", {}))

    async def access_ended(self, event):
        await self.disconnect(ACCESS_ENDED)
        self.live_groups = []
        await self.close(code=ACCESS_ENDED)

    async def call_event(self, event):
        # The queue shows an approved call as approved; running upstream changes nothing there.
        if self.view == QUEUE and event["event"] == "call.forwarded":
            return
        await self.send_json(await db_sync_to_async(self.call_payload)(event["event"], event["call_id"]))

    async def catalog_event(self, event):
        # Every page shows how many tools need review; the review list reads itself again on this.
        count = await db_sync_to_async(review.review_count)()
        await self.send_json({"event": "catalog.review", "server_id": event["server_id"], "review_count": count})
        # A changed tool changes what its pending calls would run: their rows say so.
        if self.view == QUEUE:
            for call_id in await db_sync_to_async(self.pending_of_server)(event["server_id"]):
                await self.send_json(await db_sync_to_async(self.call_payload)("catalog.changed", call_id))

    async def server_event(self, event):
        payload = await db_sync_to_async(self.server_payload)(event["server_id"])
        if payload is not None:
            await self.send_json(payload)

    def pending_of_server(self, server_id) -> list[int]:
        return list(rows.pending_calls().filter(server_id=server_id).values_list("pk", flat=True))

    def call_payload(self, event: str, call_id: int) -> dict:
        payload = {"event": event, "call_id": call_id}
        if self.view == QUEUE and event in ACTIONS_CHANGES:
            call = Call.objects.filter(pk=call_id).first()
            if call is not None:
                payload["status"] = call.status
                payload["actions"] = rows.render_fragment(rows.QUEUE_ACTIONS, self.request, call=call)
            return self.counted(payload, call)
        try:
            call = rows.shown_calls().get(pk=call_id)
        except Call.DoesNotExist:
            return self.counted(payload)
        payload["status"] = call.status
        if self.view == QUEUE and event == "call.pending":
            # The fragment is the call's group holding the call alone. The page places the call by its group:
            # in the group's rows when their end is on the page, as a new group on the last page, and
            # otherwise only in the counts.
            if not self.queue_filter.matches(call):
                return self.counted(payload)
            self.counted(payload, call)
            group = arriving_group(call, payload["group_count"])
            payload["html"] = rows.render_fragment(rows.QUEUE_GROUP, self.request, group=group)
            return payload
        payload["html"] = self.call_html(call)
        return self.counted(payload)

    def counted(self, payload: dict, call: Call | None = None) -> dict:
        """The payload with the pending count, where its event changes that, and with the count of `call`'s group."""
        changes_count = payload["event"] in COUNT_CHANGES
        if call is not None:
            total, payload["group_count"] = pending_counts(self.queue_filter, call)
            payload["group"] = group_key(call.token_id, call.tool_name)
            if changes_count:
                payload["pending_count"] = total
        elif changes_count:
            payload["pending_count"] = rows.pending_count()
        return payload

    def call_html(self, call: Call) -> str | None:
        """The fragment for this page; '' tells the page to drop the row; None, that it shows no such thing."""
        if self.view == QUEUE:
            return rows.render_fragment(rows.QUEUE_ROW, self.request, call=call)
        if self.view == RECENT:
            if self.statuses and call.status not in self.statuses:
                return ""
            return rows.render_fragment(rows.RECENT_ROW, self.request, call=call)
        if self.view == CALL and call.pk == self.call_id:
            return rows.render_fragment(rows.CALL_BODY, self.request, call=call)
        return None

    def server_payload(self, server_id) -> dict | None:
        server = Server.objects.filter(pk=server_id).first()
        if server is None:
            return None
        html = rows.render_fragment(rows.HEALTH, self.request, server=server)
        return {"event": "server.status", "server_id": server_id, "health": server.health, "html": html}
