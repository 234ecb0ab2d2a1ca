"""The audit log: append-only events, each carrying the hash of the one before.

Appends are serialized by locking the single AuditHead row, so the chain never
forks however many processes write at once, and an event is written in the same
transaction as the change it records: both land or neither does.
"""

import json
from dataclasses import dataclass

from django.core.serializers.json import DjangoJSONEncoder
from django.db import transaction
from django.utils import timezone

from approvals.models import AuditEvent, AuditHead
from approvals.protocol.canonical import sha256_digest


@dataclass(frozen=True)
class Actor:
    type: str
    id: int | None
    name: str

    @classmethod
    def user(cls, user):
        return cls("user", user.pk, user.get_username())

    @classmethod
    def client(cls, token):
        return cls("client", token.pk, token.name)


SYSTEM = Actor("system", None, "system")


def event_hash(fields: dict) -> str:
    return sha256_digest(fields)


def hashed_fields(event: AuditEvent) -> dict:
    return {
        "seq": event.seq,
        "at": event.at.isoformat(),
        "actor_type": event.actor_type,
        "actor_id": event.actor_id,
        "actor_name": event.actor_name,
        "action": event.action,
        "request_id": event.request_id,
        "call_id": event.call_id,
        "server_id": event.server_id,
        "tool_id": event.tool_id,
        "token_id": event.token_id,
        "data": event.data,
        "prev_hash": event.prev_hash,
    }


def record(action: str, actor: Actor, *, data=None, request_id="", call=None, server=None, tool=None, token=None) -> AuditEvent:
    with transaction.atomic():
        head = locked_head()
        event = AuditEvent(
            seq=head.seq + 1,
            at=timezone.now(),
            actor_type=actor.type,
            actor_id=actor.id,
            actor_name=actor.name,
            action=action,
            request_id=request_id or (call.request_id if call is not None else ""),
            call_id=call.pk if call is not None else None,
            server_id=pk_of(server) if server is not None else (call.server_id if call is not None else None),
            tool_id=pk_of(tool) if tool is not None else (call.tool_id if call is not None else None),
            token_id=pk_of(token) if token is not None else (call.token_id if call is not None else None),
            data=data or {},
            prev_hash=head.hash,
        )
        # JSON round-trips may change what was given (tuples, non-string keys): hash what is stored.
        event.data = normalized(event.data)
        event.hash = event_hash(hashed_fields(event))
        event.save(force_insert=True)
        head.seq, head.hash = event.seq, event.hash
        head.save(update_fields=["seq", "hash"])
    return event


def locked_head() -> AuditHead:
    try:
        return AuditHead.objects.select_for_update().get(pk=1)
    except AuditHead.DoesNotExist:
        # The migration creates the head; a flushed test database or a restore
        # without it continues from the last event there is.
        last = AuditEvent.objects.order_by("-seq").first()
        defaults = {"seq": last.seq, "hash": last.hash} if last else {}
        AuditHead.objects.get_or_create(pk=1, defaults=defaults)
        return AuditHead.objects.select_for_update().get(pk=1)


def pk_of(obj):
    return obj.pk if hasattr(obj, "pk") else obj


def normalized(data):
    return json.loads(json.dumps(data, cls=DjangoJSONEncoder))
