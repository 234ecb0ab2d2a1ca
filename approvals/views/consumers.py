"""The operators' websocket: each event re-reads what it names and pushes the fragment the page shows.

A page says what it shows in the query string (view=queue, view=recent with
status filters, view=call with id), and on its first connection what it was
rendered from (since, live/marks); every page also gets the pending count.
Fragments are rendered for this connection's user with the page's own
templates, so a pushed row and a reloaded row are the same markup.
"""

import asyncio
import logging
from urllib.parse import parse_qs

from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings
from django.db.models import prefetch_related_objects

from approvals import roles
from approvals.calls.models import Call
from approvals.catalog import review
from approvals.catalog.models import Server
from approvals.db.consumer_db import KeepsItsConnection, db_sync_to_async
from approvals.display import rows, timeline
from approvals.display.queue import QueueFilter, arriving_group, group_key, pending_counts
from approvals.forms.fields import whole_number
from approvals.live import access_changes, events, marks
from approvals.views.input_events import InputEvents

log = logging.getLogger(__name__)

# Where the pages open their socket (approvals.routing routes it to OperatorConsumer).
LIVE_PATH = "ws/console/"

QUEUE, RECENT, CALL = "queue", "recent", "call"
# Closed because the user may no longer watch calls: the page reloads, to the sign-in page or a refusal.
ACCESS_ENDED = 4403
# A call leaves the queue only on these; a forwarded or finished call had left it already.
COUNT_CHANGES = {"call.pending", "call.decided", "call.expired", "call.cancelled"}
# On the queue a decided or ended call leaves at once, and the page is told how it ended. That needs
# the call's own row alone: reading it with its tool, server and client would compete with forwarding
# that very call when it runs in the same process.
LEAVES_QUEUE = {"call.decided", "call.finished", "call.expired", "call.cancelled"}


class OperatorConsumer(KeepsItsConnection, InputEvents, AsyncJsonWebsocketConsumer):
    async def connect(self):
        self.unsent, self.pushing = [], None
        user = self.scope.get("user")
        if user is None or not await db_sync_to_async(roles.can_view_calls)(user):
            # Closing before accepting refuses the handshake (HTTP 403).
            await self.close()
            return
        query = parse_qs(self.scope.get("query_string", b"").decode("latin-1"))
        self.view = (query.get("view") or [""])[0]
        self.statuses = rows.chosen_statuses(query.get("status", []))
        self.queue_filter = QueueFilter.from_query({name: values[0] for name, values in query.items()})
        self.call_id = whole_number(query.get("id", [""])[0]) if self.view == CALL else None
        # A call's page a notification opened keeps naming its device in the forms pushed to it.
        self.push_device = whole_number(query.get("push", [""])[0]) if self.view == CALL else None
        self.request = rows.fragment_request(user, self.scope.get("cookies", {}))
        self.live_groups = [events.OPERATORS, events.user_group(user.pk)]
        session = self.scope.get("session")
        if session is not None and session.session_key:
            self.live_groups.append(events.session_group(session.session_key))
        for group in self.live_groups:
            await self.channel_layer.group_add(group, self.channel_name)
        await self.accept()
        # Listening now, it can tell a page connecting for the first time whether anything happened since its
        # render, which no event will bring it; a page connecting again reads itself anyway, and names no mark.
        since = whole_number(query.get("since", [""])[0])
        if since is not None and await db_sync_to_async(marks.changed_since)(since):
            await self.send_json({"event": "stale"})
        self.rechecks = asyncio.ensure_future(self.recheck_access_now_and_then())

    async def disconnect(self, code):
        for group in getattr(self, "live_groups", []):
            await self.channel_layer.group_discard(group, self.channel_name)
        for task in (getattr(self, "rechecks", None), getattr(self, "pushing", None)):
            if task is not None:
                task.cancel()

    async def recheck_access_now_and_then(self):
        # Through the socket's own channel, so that the check takes its turn among the events.
        while True:
            await asyncio.sleep(settings.SOCKET_ACCESS_RECHECK_SECONDS)
            await self.channel_layer.send(self.channel_name, {"type": "access.changed"})

    async def access_changed(self, event):
        session = self.scope.get("session")
        user = await db_sync_to_async(access_changes.signed_in_user)(session.session_key if session else None)
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
        self.push_calls([(event["event"], event["call_id"])])

    def push_calls(self, events: list[tuple[str, int]]):
        self.unsent.extend(events)
        if self.pushing is None:
            self.pushing = asyncio.ensure_future(self.push_unsent())

    async def push_unsent(self):
        """Sends the call events in order, in batches: the events that arrive while one batch is read and rendered
        make the next, so that a burst of calls costs a few queries per batch, not per call."""
        try:
            while self.unsent:
                batch, self.unsent = self.unsent, []
                for payload in await db_sync_to_async(self.call_payloads)(batch):
                    await self.send_json(payload)
        except Exception:
            # The page reconnects, and reads itself again, rather than miss what follows unseen.
            log.exception("pushing call events to an operator's page failed")
            await self.close()
        finally:
            self.pushing = None

    async def call_progress(self, event):
        if self.view == CALL and event["call_id"] == self.call_id:
            await self.send_json({"event": "call.progress", **{k: v for k, v in event.items() if k != "type"}})

    async def catalog_event(self, event):
        # Every page shows how many tools need review; the review list reads itself again on this.
        count = await db_sync_to_async(review.review_count)()
        await self.send_json({"event": "catalog.review", "server_id": event["server_id"], "review_count": count})
        # A changed tool changes what its pending calls would run: their rows say so.
        if self.view == QUEUE:
            changed = await db_sync_to_async(self.pending_of_server)(event["server_id"])
            self.push_calls([("catalog.changed", call_id) for call_id in changed])

    async def server_event(self, event):
        payload = await db_sync_to_async(self.server_payload)(event["server_id"])
        if payload is not None:
            await self.send_json(payload)

    def pending_of_server(self, server_id) -> list[int]:
        return list(rows.pending_calls().filter(server_id=server_id).values_list("pk", flat=True))

    def call_payloads(self, batch: list[tuple[str, int]]) -> list[dict]:
        """What each event of `batch` pushes, read together: the calls in at most two queries, the counts in one."""
        leaving = {call_id for event, call_id in batch if self.view == QUEUE and event in LEAVES_QUEUE}
        shown = {call_id for _, call_id in batch} - leaving
        calls = Call.objects.in_bulk(leaving) if leaving else {}
        calls |= rows.shown_calls().in_bulk(shown) if shown else {}
        prefetch_related_objects([c for c in calls.values() if c.approvals_needed > 1], "approvals")
        counted = [calls[call_id] for event, call_id in batch if self.counts_group(event, calls.get(call_id))]
        total, groups = pending_counts(self.queue_filter, counted)
        if total is None and any(event in COUNT_CHANGES for event, _ in batch):
            total = rows.pending_count()
        return [self.call_payload(event, call_id, calls.get(call_id), total, groups) for event, call_id in batch]

    def counts_group(self, event: str, call: Call | None) -> bool:
        if call is None or self.view != QUEUE:
            return False
        return event in LEAVES_QUEUE or (event == "call.pending" and self.queue_filter.matches(call))

    def call_payload(self, event: str, call_id: int, call: Call | None, total: int | None, groups: dict) -> dict:
        payload = {"event": event, "call_id": call_id}
        if event in COUNT_CHANGES:
            payload["pending_count"] = total
        if call is None:
            return payload
        payload["status"] = call.status
        grouped = self.counts_group(event, call)
        if grouped:
            payload["group"] = group_key(call.token_id, call.tool_name)
            payload["group_count"] = groups[payload["group"]]
        if self.view == QUEUE and event in LEAVES_QUEUE and call.status != Call.Status.PENDING:
            payload["tool"], payload["outcome"] = call.tool_name, timeline.outcome_text(call)
            # When it left, for the selected call's panel to say how long ago ("Approved by ann, 2 s ago").
            ended = call.decided_at or call.answered_at
            payload["ended_at"] = ended.isoformat() if ended else None
        elif self.view == QUEUE and event == "call.pending":
            # The fragment is the call's group holding the call alone. The page places the call by its group:
            # in the group's rows when their end is on the page, as a new group on the last page, and
            # otherwise only in the counts.
            if grouped:
                group = arriving_group(call, payload["group_count"])
                payload["html"] = rows.render_fragment(rows.QUEUE_GROUP, self.request, group=group)
        else:
            payload["html"] = self.call_html(call)
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
            return rows.render_fragment(rows.CALL_BODY, self.request, call=call, push_device=self.push_device)
        return None

    def server_payload(self, server_id) -> dict | None:
        server = Server.objects.filter(pk=server_id).first()
        if server is None:
            return None
        html = rows.render_fragment(rows.HEALTH, self.request, server=server)
        return {"event": "server.status", "server_id": server_id, "health": server.health, "html": html}
