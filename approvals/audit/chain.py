"""The audit log: append-only events, each carrying the hash of the one before.

Appends are serialized by locking the single AuditHead row, so the chain never
forks however many processes write at once, and an event is written in the same
transaction as the change it records: both land or neither does.

The event hash, defined here once for record() and for verification alike:
HMAC-SHA256 keyed with AUDIT_KEY over the canonical JSON of the object holding the event's thirteen
HASHED fields (seq, at, actor_type, actor_id, actor_name, action, request_id,
call_id, server_id, tool_id, token_id, data, prev_hash), with `at` written as
``datetime.isoformat()`` in UTC. Canonical JSON is the encoding of
approvals.protocol.canonical: keys sorted, no whitespace, non-ASCII as itself,
UTF-8, floats as Python's repr. `encode_event` builds those very bytes by hand
rather than through canonical_json because verification must run at 100,000
events a second and more; a test holds the two byte for byte equal.

What is hashed is what the database gives back: record() first brings `data` to
the form it will be read in (see `stored_form`).

The key lives outside the database (settings.AUDIT_KEY), so whoever holds the
database, even as its owner, can delete or reorder events but cannot write one
whose hash verifies, nor mend the links around a change.

Beside it runs the public chain (approvals.audit.public_chain), which anyone can
recompute without a key: each event keeps its value as `public_hash`, computed here.
Unkeyed, it proves nothing alone; signed checkpoints (approvals.audit.checkpoints)
make it evidence an outsider can check (tools/verify_export.py).
"""

import json
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from django.apps import apps as global_apps
from django.core.serializers.json import DjangoJSONEncoder
from django.db import transaction
from django.utils import timezone

from approvals import driver
from approvals.audit import stored
from approvals.audit.actions import registered
from approvals.audit.encoding import encode_event, hashed_row, keyed_hash
from approvals.audit.models import AuditHead
from approvals.audit.public_chain import public_chain_value


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


_batches = threading.local()


@dataclass(slots=True, eq=False)
class Event:
    """An audit event on its way into the chain: its fields as the table holds them, no model instance.

    append() numbers, links and hashes it; its row is then written with the batch's one INSERT.
    """

    at: datetime
    actor_type: str
    actor_id: int | None
    actor_name: str
    action: str
    request_id: str
    call_id: int | None
    server_id: int | None
    tool_id: int | None
    token_id: int | None
    data: dict
    seq: int = 0
    prev_hash: str = ""
    hash: str = ""
    public_hash: str = ""


def record(
    action: str, actor: Actor, *, data=None, request_id="", call=None, server=None, tool=None, token=None
) -> Event:
    event = Event(
        timezone.now(),
        actor.type,
        actor.id,
        actor.name,
        registered(action),
        request_id or (call.request_id if call is not None else ""),
        call.pk if call is not None else None,
        pk_of(server) if server is not None else (call.server_id if call is not None else None),
        pk_of(tool) if tool is not None else (call.tool_id if call is not None else None),
        pk_of(token) if token is not None else (call.token_id if call is not None else None),
        stored_form(data or {}),
    )
    pending = getattr(_batches, "events", None)
    if pending is not None:
        pending.append(event)
    else:
        append([event])
    return event


@contextmanager
def batch(last: bool = False):
    """Events recorded inside are appended together when it ends: one lock of the head, one insert.

    It gives the list of events recorded so far, from which a caller drops those of work it rolled back. `last`:
    the append is the last statement of the transaction (driver.execute).
    """
    if getattr(_batches, "events", None) is not None:
        yield _batches.events
        return
    _batches.events = []
    try:
        yield _batches.events
        events = _batches.events
    finally:
        _batches.events = None
    if events:
        append(events, last)


def append(events: list[Event], last: bool = False):
    """Chain `events` onto the head and store them (audit.stored): lock the head, insert, move the head."""
    for event in events:
        registered(event.action)
    database = driver.database()
    # No savepoint: inside a caller's transaction the events must stand or fall with its change anyway.
    with transaction.atomic(using=database.alias, savepoint=False):
        seq, prev_hash, public = locked_tip(database)
        rows, operations = [], database.ops
        for event in events:
            event.seq, event.prev_hash = seq + 1, prev_hash
            encoded = encode_event(hashed_row(event))
            event.hash, event.public_hash = keyed_hash(encoded), public_chain_value(public, encoded)
            seq, prev_hash, public = event.seq, event.hash, event.public_hash
            rows.append(stored.stored_row(event, operations))
        stored.store(database, rows, [seq, prev_hash, public], last)


def locked_tip(database) -> tuple[int, str, str]:
    """The head's sequence number, hash and public hash, the head locked until the transaction ends.

    SQLite has no row locks: the console's SQLite transactions take the database's write
    lock when they begin (transaction_mode IMMEDIATE), which serializes appends there.
    """
    lock = " FOR UPDATE" if database.features.has_select_for_update else ""
    tip = driver.fetch_one(f"SELECT seq, hash, public_hash FROM {stored.table(AuditHead)} WHERE id = 1{lock}", ())
    if tip is None:
        raise MissingHead()
    return tip


class MissingHead(RuntimeError):
    """No head row: appending now would start a second chain, and hide that the first one lost its end."""

    def __init__(self):
        super().__init__(
            "The audit chain has no head row (approvals_audithead, id 1): nothing can be appended until it is "
            "restored, from a backup or from the last event. `manage.py verify_audit` shows what is left."
        )


def locked_head() -> AuditHead:
    try:
        return AuditHead.objects.select_for_update().get(pk=1)
    except AuditHead.DoesNotExist:
        raise MissingHead() from None


def start_empty_log(apps=global_apps, using="default", **kwargs):
    """Give an empty log its head: after migrate, and after a flush, which empties every table."""
    try:
        head, events = (apps.get_model("approvals", name) for name in ("AuditHead", "AuditEvent"))
    except LookupError:
        # Migrated back to before the audit tables.
        return
    if not head.objects.using(using).exists() and not events.objects.using(using).exists():
        head.objects.using(using).create(pk=1)


def pk_of(obj):
    return obj.pk if hasattr(obj, "pk") else obj


def stored_form(data):
    """`data` as the database will give it back, so that the hash holds after the round trip.

    JSON turns tuples into lists and dates into strings. PostgreSQL keeps JSON numbers
    as numeric, which has no exponent and no negative zero: 1e+20 comes back as the
    integer 100000000000000000000 and -0.0 as 0.0, so both are read that way here too,
    on every database. NaN and the infinities have no JSON form and are refused.
    """
    return _READ.decode(_WRITTEN.encode(data))


def _stored_number(text):
    if "e+" in text:
        return int(Decimal(text))
    value = float(text)
    return value if value != 0 else 0.0


# Made once, as json.dumps and json.loads would make them at every call given these arguments.
_WRITTEN = DjangoJSONEncoder(allow_nan=False)
_READ = json.JSONDecoder(parse_float=_stored_number)
