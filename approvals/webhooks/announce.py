"""What the rest of the console calls when something webhooks tell of happens: one small call at each seam
(a call's or an input request's change comes through approvals.actions.announce).

Each runs inside the transaction that made the change: a delivery row for every
endpoint that wants the event is written with it, and sending starts after commit
(approvals.webhooks.sending), off the request that made the change. The body is
fixed now, so that a receiver reads the call as it was at this step, and it names
what happened without the arguments, results or anything to act on: a receiver
follows the link and signs in.
"""

import uuid

from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from approvals.db import batch_reads
from approvals.webhooks.models import WebhookDelivery, WebhookEndpoint


def call_changed(event_type: str, call):
    """A call moved on; `call` is any row with a call's fields (its id, tool name, status, token, server)."""
    announce(event_type, lambda: {"call": call_data(call)}, path=("call", call.pk))


def call_escalated(call):
    """A pending call came within its rule's escalation time of expiring: when it expires, and who is on it."""
    data = {"call": call_data(call) | {"expires_at": stamp(call.expires_at), "claimed_by": call.claimed_by_name}}
    announce("call.escalated", lambda: data, path=("call", call.pk))


def input_requested(request):
    """An input request that an operator must answer (not one passed through to the client)."""
    announce(
        "input.requested",
        lambda: {"input": input_data(request), "call": call_data(request.call)},
        path=("input", request.pk),
    )


def entries_need_review(server, exposed_names: list[str], surface: dict[str, list[str]]):
    """Tools, and resources, templates or prompts (by kind label) that a sync left awaiting review."""
    surface = {label: sorted(names) for label, names in surface.items() if names}
    if exposed_names or surface:
        data = {"server": {"id": server.pk, "name": server.name}, "tools": sorted(exposed_names), **surface}
        announce("tool.needs_review", lambda: data, path=("review",))


def server_needs_authorization(server, user, scope: str, reason: str):
    """A server's connection (the shared one, or one person's) needs someone to Connect it again."""
    data = {
        "server": {"id": server.pk, "name": server.name},
        "connection": "per_person" if user is not None else "shared",
        "user": user.get_username() if user is not None else None,
        "scope": scope,
        "reason": reason,
    }
    announce("server.needs_authorization", lambda: data, path=("server", server.slug))


def verification_failed(verification):
    """A verification of the audit chain that did not find it intact (broken, or not verified)."""
    data = {
        "verification": {
            "id": verification.pk,
            "broken_seq": verification.broken_seq,
            "problem": verification.problem,
            "run_by": verification.run_by,
            "finished_at": verification.finished_at.isoformat(),
        }
    }
    announce("audit.verification_failed", lambda: data, path=("audit",))


def announce(event_type: str, data, path: tuple):
    """A delivery of `event_type` for each enabled endpoint that wants it; `data()` builds the body's data once.
    `path` is the page's URL name and arguments: reversed only when some endpoint wants the event, as a call's
    every step passes here."""
    enabled = batch_reads.once_kept("webhook endpoints", lambda: list(WebhookEndpoint.objects.filter(enabled=True)))
    endpoints = [e for e in enabled if event_type in e.events]
    if not endpoints:
        return
    from approvals.webhooks import sending

    body, now, page = data(), timezone.now(), reverse(path[0], args=path[1:])
    deliveries = WebhookDelivery.objects.bulk_create(
        WebhookDelivery(
            endpoint=endpoint,
            message_id=f"msg_{uuid.uuid4().hex}",
            event_type=event_type,
            payload={
                "type": event_type,
                "timestamp": now.isoformat(),
                "data": {**body, "url": endpoint.console_url.rstrip("/") + page},
            },
            created_at=now,
            next_attempt_at=now,
        )
        for endpoint in endpoints
    )
    ids = [delivery.pk for delivery in deliveries]
    # Robust: a broker that fails must not fail the call whose event this is; the deliveries stay due.
    transaction.on_commit(lambda: sending.send_soon(ids), robust=True)


def call_data(call) -> dict:
    token, server = getattr(call, "token", None), getattr(call, "server", None)
    return {
        "id": call.pk,
        "tool": call.tool_name,
        "status": call.status,
        "client": token.name if token is not None else "",
        "server": server.name if server is not None else "",
        "decided_by": call.decided_by_name,
        "reason": call.reason,
        "received_at": stamp(call.received_at),
        "decided_at": stamp(call.decided_at),
        "answered_at": stamp(call.answered_at),
    }


def input_data(request) -> dict:
    return {
        "id": request.pk,
        "method": request.method,
        "mode": request.mode,
        "expires_at": stamp(request.expires_at),
    }


def stamp(when) -> str | None:
    return when.isoformat() if when is not None else None
