"""What an audit event keeps of a large value (a call's arguments, its result): its digest, its size, a preview.

The call's row holds the value whole. The event holds the SHA-256 digest of its canonical
JSON, which binds the event to that stored value (recompute it from the row to check), its
size, and the value itself only when it fits AUDIT_PREVIEW_BYTES; otherwise the first
AUDIT_PREVIEW_BYTES of its canonical JSON. A 1 MiB argument is so written once, not once
per event that names it.
"""

import hashlib

from django.conf import settings

from approvals.protocol.canonical import canonical_json


def value_fields(name: str, value, encoded: bytes | None = None) -> dict:
    """`name` (the value, when small) or `name_preview`, with `name_digest` and `name_bytes`; `encoded`, the value's
    canonical JSON when the caller has it."""
    encoded = canonical_json(value) if encoded is None else encoded
    # protocol.canonical.sha256_digest, without encoding the value a second time.
    fields = {f"{name}_digest": hashlib.sha256(encoded).hexdigest(), f"{name}_bytes": len(encoded)}
    cap = settings.AUDIT_PREVIEW_BYTES
    if len(encoded) <= cap:
        fields[name] = value
    else:
        # Cut on a character boundary: a preview is text, never half a UTF-8 sequence.
        fields[f"{name}_preview"] = encoded[:cap].decode("utf-8", errors="ignore")
    return fields
