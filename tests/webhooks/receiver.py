"""A webhook receiver on 127.0.0.1 that a test starts: it records what it is sent and answers as it is told."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks import Webhook

from approvals.webhooks.models import WebhookAttempt
from tests.fixtures.http_answers import send
from tests.fixtures.waiting import wait_until

# How long a hanging receiver holds a request at most, should a test fail before releasing it.
LONGEST_HANG = 60


class Receiver:
    """Answers each POST with the next of `answers` (a status, or a status, headers and maybe a body), then 204.

    With `hang`, it records a request and then holds it until `release()`.
    """

    def __init__(self, answers=(), hang=False):
        self.requests: list[tuple[dict, bytes]] = []
        self.answers, self.hang, self.released = list(answers), hang, threading.Event()
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self.handler())
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, name="receiver", daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def handler(self):
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                with receiver.lock:
                    receiver.requests.append(({k.lower(): v for k, v in self.headers.items()}, body))
                    answer = receiver.answers.pop(0) if receiver.answers else 204
                if receiver.hang:
                    receiver.released.wait(LONGEST_HANG)
                status, headers, *rest = answer if isinstance(answer, tuple) else (answer, {})
                send(self, status, rest[0] if rest else b"", headers)

            def log_message(self, *args):
                pass

        return Handler

    def received(self, count: int, timeout=20.0) -> list[tuple[dict, bytes]]:
        wait_until(lambda: len(self.requests) >= count, timeout=timeout, message=f"{count} requests at the receiver")
        return list(self.requests)

    def verified(self, secret: str, count: int) -> list[dict]:
        """The bodies of the first `count` requests, each checked with the standardwebhooks package."""
        return [Webhook(secret).verify(body, headers) for headers, body in self.received(count)[:count]]

    def release(self):
        self.released.set()

    def close(self):
        self.release()
        self.server.shutdown()
        self.server.server_close()


def body_of(request) -> dict:
    return json.loads(request[1])


def attempts_recorded(endpoint, count: int, timeout=20.0) -> list[WebhookAttempt]:
    """The endpoint's attempts, in order, once at least `count` are recorded."""

    def enough():
        rows = list(WebhookAttempt.objects.filter(delivery__endpoint=endpoint).order_by("delivery_id", "number"))
        return rows if len(rows) >= count else None

    return wait_until(enough, timeout=timeout, message=f"{count} attempts recorded")
