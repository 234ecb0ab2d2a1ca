"""What the evidence tests share: tools/verify_export.py loaded as a module and run in this process, openssl's
check of a signature, and audit events with values whose canonical bytes are easy to get wrong."""

import importlib.util
import io
import subprocess
import sys
from pathlib import Path

from django.utils import timezone

from approvals.audit import chain

VERIFIER = Path(__file__).resolve().parents[2] / "tools" / "verify_export.py"

spec = importlib.util.spec_from_file_location("verify_export", VERIFIER)
verify_export = importlib.util.module_from_spec(spec)
spec.loader.exec_module(verify_export)

# Values whose canonical bytes are easy to get wrong: non-ASCII, a line separator, quotes, floats, big integers.
ODD_DATA = [
    {"reason": 'Zoë said "no"\u2028twice', "n": -0.5, "big": 10**20, "nested": {"b": [1, 2.25], "a": None}},
    {"text": "tab\there, cr\rthere", "ok": True, "list": [], "empty": {}},
]


def events(count):
    made = []
    for start in range(0, count, 1000):
        batch = [
            chain.Event(
                at=timezone.now(),
                actor_type="user",
                actor_id=n % 7,
                actor_name=("=cmd" if n % 97 == 0 else "\rcarriage" if n % 89 == 0 else f"operator {n % 5}"),
                action="call.denied",
                request_id=f"req-{n}",
                call_id=n,
                server_id=n % 3 or None,
                tool_id=None,
                token_id=n % 11,
                data=chain.stored_form(ODD_DATA[n % 2] | {"n": n}),
            )
            for n in range(start, min(start + 1000, count))
        ]
        chain.append(batch)
        made += batch
    return made


def check(path, key):
    """verify_export's exit status and what it printed, in this process."""
    out = io.StringIO()
    saved, sys.stdout = sys.stdout, out
    try:
        status = verify_export.main([str(path), "--public-key", str(key)])
    finally:
        sys.stdout = saved
    return status, out.getvalue()


def openssl_verifies(key, message, signature) -> bool:
    command = ["openssl", "pkeyutl", "-verify", "-pubin", "-inkey", str(key), "-rawin", "-in", str(message)]
    done = subprocess.run([*command, "-sigfile", str(signature)], capture_output=True, text=True, timeout=30)
    return done.returncode == 0 and "Signature Verified Successfully" in done.stdout
