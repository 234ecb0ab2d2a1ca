"""The console's VAPID key (RFC 8292): what browsers subscribe with, and what signs each push request.

WEB_PUSH_VAPID_KEY is a PEM P-256 private key, the base64url 32-byte private key that web-push tools print, or any
other secret text (what an embedded console keeps in var/), whose SHA-256 makes the key: kept once, it names the
same key at every start, so browsers' subscriptions outlive a restart.
"""

import base64
import hashlib
import time
from functools import lru_cache
from urllib.parse import urlsplit

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from django.conf import settings
from py_vapid import Vapid02

# P-256's group order: a private key is a number from 1 to ORDER - 1.
ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
# How long a signed push request stays good; push services refuse more than a day.
TOKEN_SECONDS = 12 * 3600


@lru_cache(maxsize=4)
def private_key(secret: str) -> ec.EllipticCurvePrivateKey:
    text = secret.strip()
    if text.startswith("-----BEGIN"):
        key = serialization.load_pem_private_key(text.encode(), password=None)
        if not isinstance(key, ec.EllipticCurvePrivateKey) or not isinstance(key.curve, ec.SECP256R1):
            raise ValueError("WEB_PUSH_VAPID_KEY must be a P-256 (prime256v1) private key")
        return key
    raw = b64decode(text)
    if raw is not None and len(raw) == 32 and 0 < int.from_bytes(raw) < ORDER:
        return ec.derive_private_key(int.from_bytes(raw), ec.SECP256R1())
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest())
    return ec.derive_private_key(seed % (ORDER - 1) + 1, ec.SECP256R1())


def b64decode(text: str) -> bytes | None:
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except ValueError:
        return None


def b64encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def signer() -> Vapid02:
    return Vapid02(private_key(settings.WEB_PUSH_VAPID_KEY))


def public_key() -> str:
    """The applicationServerKey a browser subscribes with: the uncompressed point, base64url."""
    point = signer().public_key.public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    return b64encode(point)


def authorization(endpoint: str) -> str:
    """The Authorization header of a push request to `endpoint`: `vapid t=<JWT for its origin>, k=<public key>`."""
    parts = urlsplit(endpoint)
    claims = {
        "aud": f"{parts.scheme}://{parts.netloc}",
        "exp": int(time.time()) + TOKEN_SECONDS,
        "sub": settings.WEB_PUSH_CONTACT,
    }
    return signer().sign(claims)["Authorization"]
