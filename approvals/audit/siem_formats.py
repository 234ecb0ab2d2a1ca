"""What a forwarded audit event looks like: its JSON or CEF text, in a syslog frame or a HEC body.

Every form carries the event's sequence number and its public chain value
(approvals.audit.public_chain), so the receiving side sees a gap or a changed event.
Syslog messages follow RFC 5424 and are framed by octet counting (RFC 5425 over TLS,
RFC 6587 over TCP): the length, a space, the message, so a newline inside one is no frame's end.
Receivers and the tools reading their files still split lines on more than a newline, so no control
character (C0, DEL, C1 such as NEL) and no Unicode line or paragraph separator leaves the console raw:
each is written as its \\uXXXX escape, which JSON reads back as the character.
A HEC body is Splunk's batch form: one JSON object per event, one after the other.
"""

import json
import re
import socket
from datetime import UTC, datetime

from approvals.audit.encoding import HASHED
from approvals.protocol import identity

# Facility 13 (log audit), severity 6 (informational).
PRIORITY = 13 * 8 + 6
# RFC 5424 bounds MSGID to 32 printable characters; the longest action fits.
MSGID_CHARS = 32
# Unicode's Cc (C0, DEL, C1) and its line and paragraph separators.
BREAKING = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def escaped(text: str) -> str:
    return BREAKING.sub(lambda found: f"\\u{ord(found.group()):04x}", text)


def event_fields(row, chain_value: str) -> dict:
    """An event as it is forwarded, from its HASHED fields and its hash (in that order)."""
    fields = dict(zip(HASHED, row[:13], strict=True))
    fields["at"] = fields["at"].astimezone(UTC).isoformat()
    fields["hash"] = row[13]
    fields["chain_value"] = chain_value
    return fields


def json_text(fields: dict) -> str:
    # Outside its strings JSON text is ASCII, so each character escaped is inside one, where \uXXXX is the character.
    return escaped(json.dumps(fields, ensure_ascii=False, separators=(",", ":"), sort_keys=True))


def _cef_header(value) -> str:
    return escaped(str(value).replace("\\", "\\\\").replace("|", "\\|"))


def _cef_value(value) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return escaped(text.replace("\\", "\\\\").replace("=", "\\=").replace("\r", "\\r").replace("\n", "\\n"))


def cef_text(fields: dict) -> str:
    """ArcSight's Common Event Format: the action as the signature, the rest as extension keys."""
    action = fields["action"]
    header = "|".join(
        _cef_header(part)
        for part in ("CEF:0", "MCP", identity.NAME, identity.version(), action, action, severity(action))
    )
    extension = {
        "externalId": fields["seq"],
        "rt": fields["at"],
        "suser": fields["actor_name"],
        "cs1Label": "chainValue",
        "cs1": fields["chain_value"],
        "cs2Label": "requestId",
        "cs2": fields["request_id"],
        "cs3Label": "actorType",
        "cs3": fields["actor_type"],
        "cs4Label": "hash",
        "cs4": fields["hash"],
        "cs5Label": "prevHash",
        "cs5": fields["prev_hash"],
        "cn1Label": "callId",
        "cn1": fields["call_id"],
        "cn2Label": "serverId",
        "cn2": fields["server_id"],
        "cn3Label": "toolId",
        "cn3": fields["tool_id"],
        "suid": fields["actor_id"],
        "dvchost": socket.gethostname(),
        "msg": fields["data"],
        "cs6Label": "tokenId",
        "cs6": fields["token_id"],
    }
    return (
        header + "|" + " ".join(f"{key}={_cef_value(value)}" for key, value in extension.items() if value is not None)
    )


def severity(action: str) -> int:
    """CEF's 0 to 10: refusals and denials above the rest."""
    return 5 if action.endswith(("denied", "rejected", "refused", "login_failed", "witness_reset")) else 3


TEXT = {"json": json_text, "cef": cef_text}


def syslog_entry(fields: dict, fmt: str) -> bytes:
    """One RFC 5424 message, framed by octet counting."""
    header = (
        f"<{PRIORITY}>1 {fields['at']} {socket.gethostname() or '-'} {identity.NAME} - {fields['action'][:MSGID_CHARS]}"
    )
    structured = f'[audit@32473 seq="{fields["seq"]}" chainValue="{fields["chain_value"]}"]'
    message = f"{header} {structured} {TEXT[fmt](fields)}".encode()
    return b"%d %s" % (len(message), message)


def hec_entry(fields: dict, fmt: str) -> bytes:
    """One event of a Splunk HEC batch: the JSON form as an object, the CEF form as its text."""
    entry = {
        "time": datetime.fromisoformat(fields["at"]).timestamp(),
        "host": socket.gethostname(),
        "source": identity.NAME,
        "sourcetype": "_json" if fmt == "json" else "cef",
        "event": fields if fmt == "json" else cef_text(fields),
    }
    return json_text(entry).encode()
