#!/usr/bin/env python3
"""Check an export of the console's audit log, or an evidence pack, with the console's public key alone.

    python3 verify_export.py FILE --public-key KEY.pem

FILE is a CSV or JSON Lines export (Audit log page, Export) or an evidence pack (.zip,
`manage.py export_evidence`); KEY.pem is the console's public key (/audit/public-key.pem,
`manage.py audit_public_key`), obtained from the console itself, not from the file checked.
It needs Python 3.11+ and the `cryptography` package: no Django, no database, no AUDIT_KEY.

It recomputes the public chain: each event's value is SHA-256 over the 32 bytes of the
value before it followed by the event's canonical JSON (its thirteen hashed fields, keys
sorted, no whitespace, UTF-8). It checks the signed checkpoint that ends the file against
the public key, and that the chain recomputes to the value the checkpoint signs. It says
"intact", or names the first event changed, missing or out of order, and exits 0 or 1.

This file is written apart from the console's code on purpose: an auditor can read it
whole, and it shares no code with what it checks.
"""

import argparse
import base64
import csv
import hashlib
import io
import json
import re
import sys
import zipfile
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import load_pem_public_key

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
IDS = ("actor_id", "call_id", "server_id", "tool_id", "token_id")
CSV_TEXT = ("actor_type", "actor_name", "action", "request_id", "data")
GENESIS = "0" * 64
CHECKPOINT = re.compile(r"audit-checkpoint v1 seq=(\d+) chain=([0-9a-f]{64}) at=(\S+)")
PACK_EVENTS = "events.jsonl"
PACK_MANIFEST = "manifest.json"
PACK_SIGNATURE = "manifest.sig"


class Failed(Exception):
    """Not intact: the message names what and where."""


def canonical(event: dict) -> bytes:
    chosen = {name: event[name] for name in HASHED}
    return json.dumps(chosen, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()


def link(prev_public: str, event: dict) -> str:
    return hashlib.sha256(bytes.fromhex(prev_public) + canonical(event)).hexdigest()


class Export:
    """An export read: its events in file order, each kept as read until checked, and what follows them."""

    def __init__(self, parse):
        self.parse = parse  # (raw event, its index) -> the event as a dict
        self.events, self.before, self.head, self.checkpoint = [], None, None, None

    def seq_at(self, index: int):
        try:
            return self.parse(self.events[index], index)["seq"]
        except Failed:
            return None


def read_jsonl(text: str) -> Export:
    read = Export(jsonl_event)
    # Split on line feeds only: text inside an event may hold other characters splitlines() takes for line ends.
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        if line.startswith('{"seq"'):
            read.events.append(line)
            continue
        try:
            item = json.loads(line)
        except ValueError as exc:
            raise Failed(f"line {number} is not JSON ({exc})") from None
        if "public_chain_before" in item:
            read.before = (int(item["public_chain_before"]["seq"]), item["public_chain_before"]["value"])
        elif "chain_head" in item:
            read.head = (int(item["chain_head"]["seq"]), item["chain_head"]["hash"])
        elif "checkpoint" in item:
            read.checkpoint = item["checkpoint"]
        else:
            read.events.append(line)
    return read


def jsonl_event(line: str, index: int) -> dict:
    try:
        event = json.loads(line)
    except ValueError as exc:
        raise Failed(f"event {index + 1} of the file is not JSON ({exc})") from None
    if not isinstance(event, dict) or not isinstance(event.get("seq"), int):
        raise Failed(f"event {index + 1} of the file has no sequence number")
    return event


def read_csv(text: str) -> Export:
    rows = csv.reader(io.StringIO(text, newline=""))
    header = next(rows, None)
    if not header or header[0] != "seq":
        raise Failed("the file is neither an export's CSV nor JSON Lines")
    read = Export(lambda row, index: csv_event(dict(zip(header, row, strict=False)), index))
    for row in rows:
        if not row:
            continue
        if row[0] == "# public chain before":
            read.before = (int(row[1]), row[2])
        elif row[0] == "# chain head":
            read.head = (int(row[1]), row[2])
        elif row[0] == "# checkpoint":
            read.checkpoint = dict(zip(("seq", "chain", "at", "signed", "signature", "key_id"), row[1:], strict=False))
        else:
            read.events.append(row)
    return read


def csv_event(cells: dict, index: int) -> dict:
    try:
        event = dict(cells)
        for name in CSV_TEXT:
            # The export put one apostrophe before any text cell a spreadsheet could read as a formula.
            event[name] = event[name][1:] if event[name].startswith("'") else event[name]
        event["seq"] = int(event["seq"])
        for name in IDS:
            event[name] = int(event[name]) if event[name] != "" else None
        event["data"] = json.loads(event["data"])
    except (KeyError, ValueError) as exc:
        raise Failed(f"event {index + 1} of the file cannot be read ({exc})") from None
    return event


def read_export(text: str) -> Export:
    return read_jsonl(text) if text.lstrip().startswith("{") else read_csv(text)


def check_events(read: Export, key: Ed25519PublicKey) -> str:
    """The chain of `read` recomputed and its checkpoint checked: a one-line summary, or Failed."""
    if not read.events:
        raise Failed("the file holds no events")
    if read.before is None:
        raise Failed("the file does not say where the public chain starts (its public_chain_before line is missing)")
    signed_seq, signed_chain, at = check_checkpoint(read.checkpoint, key)
    expected_seq, value, previous, first, reached = read.before[0] + 1, read.before[1], None, None, None
    for index, raw in enumerate(read.events):
        event = read.parse(raw, index)
        seq = event["seq"]
        if seq != expected_seq:
            later = range(index + 1, len(read.events))
            if not any(read.seq_at(other) == expected_seq for other in later):
                raise Failed(f"event seq {expected_seq} is missing (seq {seq} follows seq {expected_seq - 1})")
            raise Failed(f"events are out of order: event seq {seq} stands where seq {expected_seq} belongs")
        try:
            value = link(value, event)
        except (KeyError, TypeError, ValueError) as exc:
            raise Failed(f"event seq {seq} was changed: it cannot be read ({exc})") from None
        if value != event.get("public_hash"):
            raise Failed(f"event seq {seq} was changed: its public chain value does not recompute")
        if previous is not None and event["prev_hash"] != previous[1]:
            raise Failed(f"event seq {previous[0]} was changed: its hash is not the link the next event holds")
        if seq == signed_seq:
            reached = value
        first = seq if first is None else first
        previous, expected_seq = (seq, event.get("hash")), seq + 1
    last = previous[0]
    if signed_seq > last:
        raise Failed(f"event seq {last + 1} is missing: the checkpoint signs seq {signed_seq}, after the last event")
    if signed_seq < first:
        raise Failed(f"the checkpoint signs seq {signed_seq}, before the first event: it covers none of them")
    if reached != signed_chain:
        raise Failed(f"the events up to seq {signed_seq} are not those the checkpoint signed (the chain value differs)")
    if signed_seq != last:
        raise Failed(
            f"events seq {signed_seq + 1} to {last} are not covered by the checkpoint, which signs seq {signed_seq}"
        )
    if read.head is not None and read.head != previous:
        raise Failed(f"event seq {last} was changed: the chain head line names another hash")
    return f"{len(read.events)} events, seq {first} to {last}, signed in the checkpoint of {at}"


def check_checkpoint(checkpoint, key: Ed25519PublicKey) -> tuple[int, str, str]:
    """The (seq, chain value, time) a checkpoint signs; Failed when it has none, or the signature fails."""
    if not checkpoint:
        raise Failed("the file ends with no signed checkpoint")
    signed = checkpoint.get("signed", "")
    verify_signature(key, signed.encode("ascii", errors="replace"), checkpoint.get("signature", ""), "the checkpoint")
    found = CHECKPOINT.fullmatch(signed)
    if found is None:
        raise Failed("the checkpoint's signed text is not a checkpoint")
    return int(found[1]), found[2], found[3]


def verify_signature(key: Ed25519PublicKey, message: bytes, signature: str, what: str):
    try:
        key.verify(base64.b64decode(signature, validate=True), message)
    except (InvalidSignature, ValueError):
        raise Failed(f"the signature of {what} does not verify with this public key") from None


def check_pack(path: Path, key: Ed25519PublicKey) -> list[str]:
    """An evidence pack: its signed manifest, every file it lists, the events, and every checkpoint."""
    with zipfile.ZipFile(path) as pack:
        names = set(pack.namelist())
        if PACK_MANIFEST not in names or PACK_SIGNATURE not in names:
            raise Failed("the pack has no signed manifest")
        manifest_bytes = pack.read(PACK_MANIFEST)
        verify_signature(key, manifest_bytes, pack.read(PACK_SIGNATURE).decode().strip(), "the manifest")
        manifest = json.loads(manifest_bytes)
        listed = manifest["files"]
        for name, digest in listed.items():
            if name not in names:
                raise Failed(f"the file {name} the manifest lists is missing")
            if hashlib.sha256(pack.read(name)).hexdigest() != digest:
                raise Failed(f"the file {name} was changed since the pack was made")
        extra = names - set(listed) - {PACK_MANIFEST, PACK_SIGNATURE}
        if extra:
            raise Failed(f"the pack holds files its manifest does not list: {', '.join(sorted(extra))}")
        summary = check_events(read_jsonl(pack.read(PACK_EVENTS).decode()), key)
        checkpoints = [json.loads(line) for line in pack.read("checkpoints.jsonl").decode().split("\n") if line]
        for checkpoint in checkpoints:
            check_checkpoint(checkpoint, key)
        signature = base64.b64encode(pack.read("checkpoint.sig")).decode()
        check_checkpoint({"signed": pack.read("checkpoint.txt").decode("ascii"), "signature": signature}, key)
    return [
        f"Period {manifest['since']} to {manifest['until']}: events seq {manifest['first_seq']} to "
        f"{manifest['last_seq']}.",
        f"Events: {summary}.",
        f"Checkpoints: {len(checkpoints)}, every signature valid.",
        f"Files: {len(listed)}, each as the signed manifest lists it.",
    ]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", type=Path, help="an export (.csv or .jsonl) or an evidence pack (.zip)")
    parser.add_argument("--public-key", required=True, type=Path, help="the console's public key, PEM")
    args = parser.parse_args(argv)
    try:
        key = load_pem_public_key(args.public_key.read_bytes())
        if not isinstance(key, Ed25519PublicKey):
            raise Failed(f"{args.public_key} is not an Ed25519 public key")
        if zipfile.is_zipfile(args.file):
            lines = check_pack(args.file, key)
        else:
            # Read as bytes: text mode would turn a carriage return inside a quoted cell into a line feed.
            lines = [check_events(read_export(args.file.read_bytes().decode("utf-8")), key) + "."]
    except Failed as failed:
        print(f"NOT intact: {failed}.")
        return 1
    except (OSError, ValueError, KeyError, UnicodeDecodeError, zipfile.BadZipFile) as exc:
        print(f"NOT intact: the file cannot be read ({type(exc).__name__}: {exc}).")
        return 1
    print("intact")
    for line in lines:
        print(f"  {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
