"""Signed `requestState` for the 2026-07-28 multi round-trip: the server keeps no memory between rounds.

A token reads `v1.<base64url JSON claims>.<base64url HMAC-SHA256>`. The claims are
readable on purpose (a curious operator can decode them), but only this process
can mint them, each names the call it belongs to, expires, and is accepted once.
"""

import base64
import hashlib
import hmac
import json
import os
import secrets
import time


class StateError(Exception):
    """A requestState that must not be honoured; the message says why."""


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def call_digest(tool: str, arguments: dict) -> str:
    """What binds a state to one call: the tool and its exact arguments."""
    canonical = json.dumps([tool, arguments], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


class StateSigner:
    def __init__(self, key: bytes | None = None, lifetime: float = 900.0, clock=time.time):
        # A fresh key per process: a restarted server rightly refuses states minted before it.
        self._key = key or os.urandom(32)
        self._lifetime = lifetime
        self._clock = clock
        self._spent: dict[str, float] = {}

    def seal(self, call: str, keys: list[str]) -> str:
        claims = {"call": call, "keys": keys, "exp": int(self._clock() + self._lifetime), "nonce": secrets.token_hex(8)}
        body = _b64(json.dumps(claims, separators=(",", ":")).encode())
        return f"v1.{body}.{self._sign(body)}"

    def open(self, token: str, call: str) -> dict:
        """The claims of a genuine, fresh, unspent token for `call`; spends it."""
        version, _, rest = token.partition(".")
        body, _, signature = rest.partition(".")
        if version != "v1" or not body or not hmac.compare_digest(signature, self._sign(body)):
            raise StateError("it was not issued by this server")
        try:
            claims = json.loads(_unb64(body))
        except ValueError:
            raise StateError("its claims are unreadable") from None
        now = self._clock()
        if claims.get("exp", 0) < now:
            raise StateError("it has expired; call the tool again without it")
        if claims.get("call") != call:
            raise StateError("it belongs to a different tool or different arguments")
        self._spent = {nonce: exp for nonce, exp in self._spent.items() if exp >= now}
        if claims.get("nonce") in self._spent:
            raise StateError("it was already used")
        self._spent[claims["nonce"]] = claims["exp"]
        return claims

    def _sign(self, body: str) -> str:
        return _b64(hmac.new(self._key, body.encode(), hashlib.sha256).digest())
