"""Channel-layer groups and the small typed events sent through them.

Every send happens after commit, so a listener that re-reads the database on an
event always finds what the event announces.
"""

import asyncio

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction

OPERATORS = "operators"
CATALOG = "catalog"


def call_group(call_id) -> str:
    return f"call.{call_id}"


def input_group(input_id) -> str:
    return f"input.{input_id}"


def send_after_commit(*sends: tuple[str, dict]):
    """Send each (group, message) once the transaction commits, all at once: the committing thread waits for them."""

    async def send_all():
        layer = get_channel_layer()
        await asyncio.gather(*(layer.group_send(group, message) for group, message in sends))

    transaction.on_commit(async_to_sync(send_all))


def call_changed(call, event: str):
    """Wake the request waiting on this call, wherever it lives, and tell the operators."""
    send_after_commit(
        (call_group(call.pk), {"type": "call.update", "status": call.status}),
        (OPERATORS, {"type": "call.event", "event": event, "call_id": call.pk, "status": call.status}),
    )


def catalog_changed(server_id):
    send_after_commit(
        (CATALOG, {"type": "catalog.changed", "server_id": server_id}),
        (OPERATORS, {"type": "catalog.event", "event": "catalog.changed", "server_id": server_id}),
    )


def server_status(server):
    """A server's health changed: operators' pages show it beside its calls and in the server list."""
    send_after_commit((OPERATORS, {"type": "server.event", "event": "server.status", "server_id": server.pk, "health": server.health}))


def input_changed(request, event: str):
    """Wake the handler waiting for this input request and the request relaying its call, and tell the operators."""
    send_after_commit(
        (input_group(request.pk), {"type": "input.update", "status": request.status}),
        (call_group(request.call_id), {"type": "call.update", "status": "", "input_id": request.pk}),
        (OPERATORS, {"type": "input.event", "event": event, "input_id": request.pk, "call_id": request.call_id}),
    )
