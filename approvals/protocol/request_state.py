"""The console's own requestState: a JSON payload under an HMAC-SHA256, with an expiry.

A 2026-07-28 client echoes requestState back verbatim, so whatever the console
hands out comes back attacker-controlled. The state is therefore signed with a
key derived from the caller's secret (the console passes settings.SECRET_KEY),
carries its own expiry, and is compared in constant time; the caller checks what
it binds to (token, call) in the payload it gets back.

    state = sign_state({"call": 7, "token": 3}, key, now=time.time(), lifetime=600)
    payload = read_state(state, key, now=time.time())   # or StateError
"""

import base64
import binascii
import hashlib
import hmac
import json

from approvals.protocol import identity
from approvals.protocol.canonical import canonical_json

VERSION = "mcs1"
# The derivation keeps this MAC apart from every other use of the same secret.
PURPOSE = f"{identity.NAME}/request-state\0".encode()
MAX_STATE_CHARS = 16 * 1024


class StateError(ValueError):
    """A requestState the console did not issue, altered, or past its expiry; the message says which."""


def _mac(key: bytes, body: bytes) -> bytes:
    derived = hashlib.sha256(PURPOSE + key).digest()
    return hmac.new(derived, body, hashlib.sha256).digest()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def sign_state(payload: dict, key: bytes, *, now: float, lifetime: float) -> str:
    """`payload` (JSON; "exp" is reserved) signed and valid for `lifetime` seconds from `now`."""
    if "exp" in payload:
        raise ValueError("'exp' is set by sign_state")
    body = canonical_json({**payload, "exp": int(now + lifetime)})
    return f"{VERSION}.{_b64(body)}.{_b64(_mac(key, body))}"


def read_state(state, key: bytes, *, now: float) -> dict:
    """The payload of a state this key signed and that has not expired; StateError otherwise."""
    if not isinstance(state, str) or len(state) > MAX_STATE_CHARS:
        raise StateError("requestState is not one this gateway issued")
    version, _, rest = state.partition(".")
    encoded, _, signature = rest.partition(".")
    if version != VERSION or not encoded or not signature:
        raise StateError("requestState is not one this gateway issued")
    try:
        body, mac = _unb64(encoded), _unb64(signature)
    except (binascii.Error, ValueError):
        raise StateError("requestState is malformed") from None
    if not hmac.compare_digest(mac, _mac(key, body)):
        raise StateError("requestState was altered or signed with another key")
    payload = json.loads(body)
    if not isinstance(payload, dict) or not isinstance(payload.get("exp"), int):
        raise StateError("requestState is malformed")
    if payload["exp"] <= now:
        raise StateError("requestState has expired; call the tool again")
    return payload
