"""An evidence pack: one period of the audit log as a zip an outsider can check with the public key alone.

The pack holds the period's events (and those after it up to the checkpoint that covers
them) as a JSON Lines export, every checkpoint among them, the chain's verification
result, the policy rules and servers as they stood at the start and at the end of the
period (approvals.audit_log.states), the public key, and the checkpoint that covers the
events as a text file and a raw signature, which `openssl pkeyutl -verify` takes. A manifest names each file
with its SHA-256 and is signed with AUDIT_SIGNING_KEY, so that tools/verify_export.py
checks the pack whole: the events against their checkpoint, every other file against
the manifest.
"""

import base64
import hashlib
import json
import zipfile
from dataclasses import dataclass

from django.utils import timezone

from approvals.actions import verification
from approvals.audit import checkpoints
from approvals.audit.models import AuditCheckpoint, AuditEvent, AuditVerification
from approvals.audit_log import export, states


class Empty(Exception):
    """No event falls in the period."""


@dataclass
class Period:
    since: object
    until: object
    first_seq: int
    last_seq: int


def make_pack(target, since, until, run_by: str) -> dict:
    """The pack of the period into `target`, for the command and the audit page alike: the chain verified and a
    checkpoint signed first. Empty or checkpoints.Refused when there is none to make."""
    chosen = period(since, until)
    verified = verification.run(run_by)
    checkpoints.take()
    return write_pack(target, chosen, checkpoints.first_from(chosen.last_seq), verified)


def period(since, until) -> Period:
    """The events from `since` (included) to `until` (excluded), as the run of seqs from the first to the last."""
    within = AuditEvent.objects.filter(at__gte=since, at__lt=until)
    first = within.order_by("seq").values_list("seq", flat=True).first()
    if first is None:
        raise Empty(f"no audit event falls between {since.isoformat()} and {until.isoformat()}")
    return Period(since, until, first, within.order_by("-seq").values_list("seq", flat=True).first())


def verification_dict(verification: AuditVerification) -> dict:
    fields = ("ok", "checked", "first_seq", "last_seq", "broken_seq", "expected", "found", "problem", "run_by")
    shown = {name: getattr(verification, name) for name in fields}
    times = {name: getattr(verification, name).isoformat() for name in ("started_at", "finished_at")}
    return {**shown, **times}


def as_json(value) -> bytes:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True).encode() + b"\n"


def write_pack(target, chosen: Period, covering: AuditCheckpoint, verification: AuditVerification) -> dict:
    """Write the pack for `chosen` into `target` (a path or a binary file); `covering` is a checkpoint at or after
    its last event. Returns the manifest."""
    events = AuditEvent.objects.filter(seq__gte=chosen.first_seq)
    signed = AuditCheckpoint.objects.filter(seq__gte=chosen.first_seq, seq__lte=covering.seq).order_by("seq", "id")
    stood = states.states_after(chosen.first_seq - 1, chosen.last_seq)
    at_start, at_end = stood[chosen.first_seq - 1], stood[chosen.last_seq]
    files = {
        "events.jsonl": "".join(export.export_chunks(events, "jsonl", through=covering.seq)).encode(),
        "checkpoints.jsonl": "".join(
            json.dumps(checkpoints.as_dict(checkpoint), separators=(",", ":")) + "\n" for checkpoint in signed
        ).encode(),
        "verification.json": as_json(verification_dict(verification)),
        "state-at-start.json": as_json(at_start),
        "state-at-end.json": as_json(at_end),
        "public-key.pem": checkpoints.public_key_pem().encode(),
        # The covering checkpoint as openssl takes it: the signed text and the raw signature.
        "checkpoint.txt": covering.signed.encode("ascii"),
        "checkpoint.sig": base64.b64decode(covering.signature),
    }
    manifest = {
        "since": chosen.since.isoformat(),
        "until": chosen.until.isoformat(),
        "first_seq": chosen.first_seq,
        "last_seq": chosen.last_seq,
        "through_seq": covering.seq,
        "made_at": timezone.now().isoformat(),
        "key_id": checkpoints.key_id(),
        "files": {name: hashlib.sha256(content).hexdigest() for name, content in files.items()},
    }
    manifest_bytes = as_json(manifest)
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as pack:
        for name, content in files.items():
            pack.writestr(name, content)
        pack.writestr("manifest.json", manifest_bytes)
        pack.writestr("manifest.sig", checkpoints.sign(manifest_bytes) + "\n")
    return manifest
