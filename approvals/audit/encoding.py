"""An audit event's canonical bytes, which both chains cover, and its keyed hash (HMAC-SHA256 under AUDIT_KEY)."""

import hmac
from functools import lru_cache
from json.encoder import c_make_encoder, encode_basestring

from django.conf import settings

HASHED = (
    "seq",
    "at",
    "actor_type",
    "actor_id",
    "actor_name",
    "action",
    "request_id",
    "call_id",
    "server_id",
    "tool_id",
    "token_id",
    "data",
    "prev_hash",
)


def _not_json(value):
    raise ValueError(f"{type(value).__name__} is not a JSON type")


# The C encoder made once: json.dumps builds a new one per call, which costs
# more than encoding a small event.
_encode_data = c_make_encoder(None, _not_json, encode_basestring, None, ":", ",", True, False, False)
_EVENT = (
    '{"action":%s,"actor_id":%s,"actor_name":%s,"actor_type":%s,"at":%s,"call_id":%s,"data":%s,'
    '"prev_hash":%s,"request_id":%s,"seq":%d,"server_id":%s,"token_id":%s,"tool_id":%s}'
)


def encode_event(row) -> bytes:
    """The canonical bytes of one event, given its HASHED fields in that order (anything after them is ignored)."""
    (
        seq,
        at,
        actor_type,
        actor_id,
        actor_name,
        action,
        request_id,
        call_id,
        server_id,
        tool_id,
        token_id,
        data,
        prev_hash,
    ) = row[:13]
    quote = encode_basestring
    # The ids are integers or None; written inline, as a call per id costs more than the rest of a field.
    text = _EVENT % (
        quote(action),
        "null" if actor_id is None else actor_id,
        quote(actor_name),
        quote(actor_type),
        quote(at.isoformat()),
        "null" if call_id is None else call_id,
        "".join(_encode_data(data, 0)),
        quote(prev_hash),
        quote(request_id),
        seq,
        "null" if server_id is None else server_id,
        "null" if token_id is None else token_id,
        "null" if tool_id is None else tool_id,
    )
    return text.encode("utf-8")


def event_hash(row) -> str:
    return keyed_hash(encode_event(row))


def keyed_hash(encoded: bytes) -> str:
    keyed = _keyed(settings.AUDIT_KEY).copy()
    keyed.update(encoded)
    return keyed.hexdigest()


@lru_cache(maxsize=1)
def _keyed(key: str):
    # Keyed once: each event copies it rather than setting the key up again, on the hot path of verification.
    return hmac.new(key.encode(), digestmod="sha256")


def hashed_row(event) -> tuple:
    """The HASHED fields of an event: a stored AuditEvent's, or one being appended (chain.Event)."""
    return tuple(getattr(event, name) for name in HASHED)
