"""The prying server as the console's clients reach it: added with add_server, allowed, called through /mcp of
the console in this process; and what it must not read. Shared by tests/upstream/test_isolation.py and the
stand-in console it starts as an ordinary user (ordinary_console.py)."""

import json
import os
import re
import shlex
from html import unescape
from io import StringIO
from pathlib import Path

import httpx
from asgiref.sync import async_to_sync
from django.conf import settings
from django.core.management import call_command

from approvals.catalog.models import Server
from approvals.management.commands.seed_demo import demo_passwords
from approvals.policy.models import PolicyRule
from approvals.protocol.headers import request_headers
from approvals.tokens.credentials import create_token
from approvals.upstream.probe import lineage
from tests.fixtures.gateway import MODERN, modern_envelope

PRYING = Path(__file__).parents[1] / "servers" / "prying_server.py"
KEYS = ("secret_key", "audit_key", "audit_signing_key", "credentials_key")


def console_secrets() -> list[str]:
    """var/, its keys, the demo passwords and the SQLite database (the services pass has none): all must exist."""
    demo_passwords()
    paths = [settings.VAR_DIR, *(settings.VAR_DIR / key for key in KEYS), settings.VAR_DIR / "demo-passwords.json"]
    database = settings.DATABASES["default"]
    if database["ENGINE"] == "django.db.backends.sqlite3":
        paths.append(Path(database["NAME"]))
    assert all(path.exists() for path in paths), paths
    return [str(path) for path in paths]


def ancestors() -> list[int]:
    """This process's ancestors; but pids 1 and 2, which in a sandbox are bwrap's and the server's own."""
    return [pid for pid, _ in lineage(os.getpid())[1:] if pid > 2]


def add_prying_server(python: str, env: dict[str, str]) -> Server:
    """Added as an admin adds one (add_server, which starts it to sync), its tool allowed."""
    options = [f"--env={name}={value}" for name, value in env.items()]
    call_command(
        "add_server",
        "Prying",
        f"--command={shlex.join([python, str(PRYING)])}",
        "--accept-tools",
        *options,
        stdout=StringIO(),
    )
    PolicyRule.objects.create(name="prying is the test", action="allow", tool_glob="prying_pry")
    return Server.objects.get(name="Prying")


def pry_through_mcp() -> dict[str, str]:
    """The prying server's report, from a tools/call a client sends to /mcp of the console in this process."""
    _, secret = create_token("prying client")
    arguments = {"pid": os.getpid(), "ancestors": ancestors(), "paths": console_secrets()}
    params = modern_envelope(name="prying_pry", arguments=arguments)
    headers = {
        **request_headers(MODERN, "tools/call", params),
        "Mcp-Name": "prying_pry",
        "Authorization": f"Bearer {secret}",
        "Accept": "application/json, text/event-stream",
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}

    async def post() -> httpx.Response:
        from console.asgi import application

        transport = httpx.ASGITransport(app=application)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000", timeout=60) as client:
            return await client.post("/mcp", json=body, headers=headers)

    response = async_to_sync(post)()
    assert response.status_code == 200, response.text
    if response.headers["content-type"].startswith("text/event-stream"):
        data = [line.removeprefix("data:") for line in response.text.splitlines() if line.startswith("data:")]
        message = json.loads(data[-1])
    else:
        message = response.json()
    assert "result" in message, message
    return message["result"]["structuredContent"]


def isolation_line(page: str) -> str:
    found = re.search(r"<dt>Isolation</dt><dd>(.*?)</dd>", page, re.S)
    assert found, "the server page has no isolation line"
    return unescape(found.group(1))


def assert_all_refused(report: dict[str, str], uid: int):
    assert report.pop("uid") == str(uid)
    assert report.pop("capabilities") == "none"
    assert len(report) == 2 * (1 + len(ancestors())) + len(console_secrets()), report
    assert all(outcome.startswith("refused: ") for outcome in report.values()), report
