"""The operator a bench makes: the operator role's permissions, signed in over HTTP, the queue's websocket open."""

import asyncio
import json
import secrets
import time
from urllib.parse import urlsplit

import httpx
from autobahn.asyncio.websocket import WebSocketClientFactory, WebSocketClientProtocol
from harness import TIMEOUT_SECONDS, BenchError, manage, prepare_console

OPERATOR, PASSWORD = "bench-operator", secrets.token_urlsafe(16)

MAKE_OPERATOR = (
    "from django.contrib.auth.models import Group, User; "
    f"User.objects.create_user({OPERATOR!r}, password={PASSWORD!r}).groups.add(Group.objects.get(name='operator'))"
)


def prepare_asking(env: dict, upstream_url: str) -> tuple[str, str]:
    """Migrate, add the upstream with an ask rule on its echo, a token and an operator: (tool, secret)."""
    secret = prepare_console(
        env,
        ["bench", "--url", upstream_url, "--prefix", "bench_"],
        [["--action", "ask", "--server", "bench", "--tool", "bench_echo", "--name", "push bench asks"]],
        ["push-bench", "--tools", "bench_echo"],
    )
    manage(env, "shell", "-c", MAKE_OPERATOR)
    return "bench_echo", secret


class OperatorSocket(WebSocketClientProtocol):
    """The queue page's websocket: each call.pending is handed on the moment it arrives."""

    def onOpen(self):
        self.factory.opened.set_result(None)

    def onMessage(self, payload, is_binary):
        now = time.time()
        message = json.loads(payload)
        if message.get("event") == "call.pending" and message.get("html"):
            self.factory.on_pending(message, now)

    def onClose(self, was_clean, code, reason):
        if not self.factory.opened.done():
            self.factory.opened.set_exception(BenchError(f"the operator's websocket was refused: {code} {reason}"))


class Operator:
    """The operator prepare_asking makes, signed in over HTTP with the queue page's websocket open: a subclass's
    on_pending gets each call.pending message and when it arrived (time.time())."""

    def __init__(self, base: str):
        self.base = base
        self.http = httpx.AsyncClient(base_url=base, timeout=TIMEOUT_SECONDS)

    async def sign_in(self):
        await self.http.get("/login/")
        token = self.http.cookies["csrftoken"]
        response = await self.http.post(
            "/login/", data={"username": OPERATOR, "password": PASSWORD, "csrfmiddlewaretoken": token}
        )
        if "sessionid" not in self.http.cookies:
            raise BenchError(f"the operator could not sign in: HTTP {response.status_code}")

    async def watch(self):
        host, port = urlsplit(self.base).hostname, urlsplit(self.base).port
        cookie = "; ".join(f"{name}={value}" for name, value in self.http.cookies.items())
        factory = WebSocketClientFactory(
            f"ws://{host}:{port}/ws/console/?view=queue", origin=self.base, headers={"Cookie": cookie}
        )
        factory.protocol = OperatorSocket
        factory.opened = asyncio.get_running_loop().create_future()
        factory.on_pending = self.on_pending
        self.transport, _ = await asyncio.get_running_loop().create_connection(factory, host, port)
        await asyncio.wait_for(factory.opened, TIMEOUT_SECONDS)

    def on_pending(self, message: dict, now: float):
        raise NotImplementedError

    async def close(self):
        self.transport.close()
        await self.http.aclose()
