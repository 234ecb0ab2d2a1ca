"""Checking that a request came from Slack: its v0 signature, an HMAC-SHA256 of "v0:{timestamp}:{body}" under the
app's signing secret, and a timestamp within five minutes of now, so that a captured request cannot be replayed."""

import hashlib
import hmac
import time

# The oldest (or furthest ahead) a request's timestamp may be, as Slack advises.
TOLERANCE_SECONDS = 300


def problem(secret: str, timestamp: str, body: bytes, signature: str, now: float | None = None) -> str:
    """Why the request is not Slack's, or "" when it is."""
    if not timestamp or not signature:
        return "The request carries no Slack signature."
    if not timestamp.isascii() or not timestamp.isdigit():
        return "The request's timestamp is not a number."
    if abs((now if now is not None else time.time()) - int(timestamp)) > TOLERANCE_SECONDS:
        return "The request's timestamp is more than five minutes from now."
    expected = "v0=" + hmac.new(secret.encode(), b"v0:" + timestamp.encode() + b":" + body, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected.encode(), signature.encode("utf-8", "replace")):
        return "The request's Slack signature does not match."
    return ""
