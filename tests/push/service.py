"""A push service on 127.0.0.1 that a test starts, and browsers' subscriptions to it: it checks each push's VAPID
signature (RFC 8292) against the key it names and decrypts the body (RFC 8291) with the subscription's private key
and authentication secret, as the browser would, then answers as it is told."""

import base64
import json
import os
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import http_ece
import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from tests.fixtures.http_answers import send
from tests.fixtures.waiting import wait_until


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass
class Browser:
    """One browser's subscription: the keys the console encrypts to, and what only the browser holds."""

    endpoint: str
    private_key: ec.EllipticCurvePrivateKey = field(default_factory=lambda: ec.generate_private_key(ec.SECP256R1()))
    auth: bytes = field(default_factory=lambda: os.urandom(16))

    @property
    def subscription(self) -> dict:
        point = self.private_key.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        return {"endpoint": self.endpoint, "keys": {"p256dh": b64(point), "auth": b64(self.auth)}}

    def decrypt(self, body: bytes) -> dict:
        return json.loads(http_ece.decrypt(body, private_key=self.private_key, auth_secret=self.auth))


@dataclass
class Received:
    path: str
    headers: dict
    claims: dict
    vapid_key: str
    payload: dict
    # When it was taken (time.perf_counter), for bench/web_push_latency.py.
    at: float


class PushService:
    """Answers each push with the next of `answers` (a status), then 201; keeps what it decrypted, per path."""

    def __init__(self, answers=()):
        self.browsers: dict[str, Browser] = {}
        self.received: list[Received] = []
        self.refused: list[str] = []
        self.answers, self.lock = list(answers), threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self.handler())
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, name="push-service", daemon=True).start()
        self.origin = f"http://127.0.0.1:{self.server.server_address[1]}"

    def browser(self, name: str) -> Browser:
        self.browsers[f"/push/{name}"] = made = Browser(f"{self.origin}/push/{name}")
        return made

    def take(self, path: str, headers: dict, body: bytes) -> int:
        """The push checked and decrypted as a push service and its browser would; the status to answer."""
        scheme, _, params = headers.get("authorization", "").partition(" ")
        fields = dict(part.strip().split("=", 1) for part in params.split(",") if "=" in part)
        key = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), unb64(fields.get("k", "")))
        claims = jwt.decode(fields.get("t", ""), key=key, algorithms=["ES256"], audience=self.origin)
        assert scheme == "vapid" and headers.get("content-encoding") == "aes128gcm" and int(headers["ttl"]) > 0
        payload = self.browsers[path].decrypt(body)
        with self.lock:
            self.received.append(Received(path, headers, claims, fields["k"], payload, time.perf_counter()))
            return self.answers.pop(0) if self.answers else 201

    def handler(self):
        service = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                try:
                    status = service.take(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                except Exception as exc:
                    service.refused.append(f"{type(exc).__name__}: {exc}")
                    status = 400
                send(self, status)

            def log_message(self, *args):
                pass

        return Handler

    def pushes(self, count: int, timeout=10.0) -> list[Received]:
        """The first `count` pushes taken, once there are as many (or the refusals, should one fail its checks)."""
        wait_until(lambda: len(self.received) >= count or self.refused, timeout=timeout, message=f"{count} pushes")
        assert not self.refused, self.refused
        return list(self.received)

    def close(self):
        self.server.shutdown()
        self.server.server_close()
