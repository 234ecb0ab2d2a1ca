"""A fake of Slack's Web API on 127.0.0.1 that a test starts: it checks what Slack checks of each call (the bot
token, the content type, the fields each method requires) and answers in Slack's shape, recording what it took."""

import itertools
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl

from tests.fixtures.http_answers import send_json
from tests.fixtures.waiting import wait_until

TOKEN = "xoxb-test-bot-token"
CHANNEL_ID = "C0APPROVALS"
# The fields each method refuses to go without, as Slack does.
REQUIRED = {
    "chat.postMessage": ("channel", "text", "blocks"),
    "chat.update": ("channel", "ts", "text", "blocks"),
    "chat.postEphemeral": ("channel", "user", "text"),
    "views.open": ("trigger_id", "view"),
    "users.info": ("user",),
}
FORM_METHODS = {"users.info"}
# How long a hanging fake holds a call at most, should a test fail before releasing it.
LONGEST_HANG = 60


class FakeSlack:
    def __init__(self, users=None):
        self.calls: list[tuple[str, dict]] = []
        self.users = users or {}
        # Answers to give the next calls of a method before answering it as Slack would, e.g. a rate limit.
        self.refusals: dict[str, list[tuple[int, dict]]] = {}
        # Set, a call is recorded and then held unanswered until `released` is set.
        self.hang, self.released = False, threading.Event()
        self.stamps = itertools.count(1)
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self.handler())
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, name="fake-slack", daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/api"

    def close(self):
        self.server.shutdown()
        self.server.server_close()

    def handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                method = self.path.removeprefix("/api/")
                status, answer = fake.answer(method, dict(self.headers.items()), body)
                send_json(self, status, answer)

            def log_message(self, *args):
                pass

        return Handler

    def answer(self, method: str, headers: dict, body: bytes) -> tuple[int, dict]:
        headers = {name.lower(): value for name, value in headers.items()}
        if method not in REQUIRED:
            return 404, {"ok": False, "error": "unknown_method"}
        with self.lock:
            if self.refusals.get(method):
                return self.refusals[method].pop(0)
        if headers.get("authorization") != f"Bearer {TOKEN}":
            return 200, {"ok": False, "error": "invalid_auth"}
        kind = headers.get("content-type", "").split(";")[0].strip()
        if method in FORM_METHODS:
            if kind != "application/x-www-form-urlencoded":
                return 200, {"ok": False, "error": "invalid_form_data"}
            fields = dict(parse_qsl(body.decode()))
        else:
            if kind != "application/json":
                return 200, {"ok": False, "error": "invalid_json"}
            fields = json.loads(body)
        missing = [name for name in REQUIRED[method] if not fields.get(name)]
        if missing:
            return 200, {"ok": False, "error": f"missing_{missing[0]}"}
        with self.lock:
            self.calls.append((method, fields))
        if self.hang:
            self.released.wait(LONGEST_HANG)
        if method == "chat.postMessage":
            return 200, {"ok": True, "channel": CHANNEL_ID, "ts": f"1700000000.{next(self.stamps):06d}"}
        if method == "chat.update":
            return 200, {"ok": True, "channel": fields["channel"], "ts": fields["ts"]}
        if method == "users.info":
            user = self.users.get(fields["user"])
            return 200, {"ok": True, "user": user} if user else {"ok": False, "error": "user_not_found"}
        return 200, {"ok": True}

    def made(self, method: str) -> list[dict]:
        with self.lock:
            return [fields for name, fields in self.calls if name == method]

    def sent(self, method: str, count: int = 1, timeout: float = 20.0) -> list[dict]:
        """The fields of the first `count` calls of `method`, waiting for them."""
        found = wait_until(
            lambda: len(self.made(method)) >= count, timeout=timeout, message=f"{count} {method} at the fake Slack"
        )
        return self.made(method)[:count] if found else []

    def saying(self, method: str, text: str, timeout: float = 20.0) -> dict:
        """The latest call of `method` whose text says `text`, waiting for one."""

        def found():
            return next((fields for fields in reversed(self.made(method)) if text in fields.get("text", "")), None)

        return wait_until(found, timeout=timeout, message=f"a {method} saying {text!r} at the fake Slack")
