"""The public chain: an unkeyed SHA-256 chain over the events, which anyone can recompute.

The keyed chain (approvals.audit.chain) needs AUDIT_KEY to check; this one needs only the
events. Each event's value is SHA-256 over the previous value's 32 bytes followed by the
event's canonical bytes (`encoding.encode_event`, the very bytes the keyed hash covers), the
first event's previous value being 32 zero bytes. A receiver given each event's sequence
number and value sees a gap or a changed event without any key.
"""

import hashlib

GENESIS = "0" * 64


def public_chain_value(previous_value: str, event_canonical_bytes: bytes) -> str:
    """The value of the event whose canonical bytes are given, after the event whose value is `previous_value` (hex)."""
    digest = hashlib.sha256(bytes.fromhex(previous_value))
    digest.update(event_canonical_bytes)
    return digest.hexdigest()
