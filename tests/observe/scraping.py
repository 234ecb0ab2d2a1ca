"""The console's web processes as a scraper and a few clients meet them: calls of every fate, then /metrics."""

import asyncio
import os
import shlex
import shutil
import subprocess
import sys

import httpx
import pytest
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.parser import text_string_to_metric_families

from approvals.actions import servers
from approvals.calls.models import Call
from approvals.catalog import sync
from approvals.observe import metrics
from approvals.policy.models import PolicyRule
from approvals.tokens.credentials import create_token
from tests.fixtures.gateway import MODERN, modern_envelope
from tests.fixtures.people import make_user
from tests.fixtures.processes import child_database_env
from tests.fixtures.servers import REPO
from tests.fixtures.waiting import eventually

CUSTOMER = {"customer_id": "C007"}
# Every request carries it, as a traced client's would.
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"


def promtool() -> str:
    found = shutil.which("promtool")
    if found is None:
        pytest.skip("promtool is not installed: it comes with Debian's prometheus package (apt-get install prometheus)")
    return found


def promtool_run(*arguments: str, given: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([promtool(), *arguments], input=given, capture_output=True, text=True, timeout=30)


def promtool_verdict(exposition: str) -> subprocess.CompletedProcess:
    return promtool_run("check", "metrics", given=exposition)


def samples(exposition: str) -> dict[tuple[str, frozenset], float]:
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(exposition)
        for sample in family.samples
    }


def collected(folder=None) -> dict[tuple[str, frozenset], float]:
    """What the metric files hold, added up as /metrics adds them, read straight from the folder."""
    families = MultiProcessCollector(None, path=str(folder or metrics.folder())).collect()
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in families
        for sample in family.samples
    }


def value(found: dict, name: str, **labels) -> float:
    return found.get((name, frozenset(labels.items())), 0.0)


def scrape(port: int) -> str:
    response = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=30)
    assert response.status_code == 200, response.text
    return response.text


def demo_console() -> dict[str, str]:
    """The demo server, an operator, and a token per fate a call may meet: their secrets by fate."""
    make_user("ann", superuser=True)
    server = servers.add_server(
        name="Demo",
        transport="stdio",
        command=shlex.join([sys.executable, "-m", "approvals.demo.server"]),
        accept_tools=True,
        schedule_sync=False,
    )
    assert sync.sync_server(server).ok
    secrets = {}
    for fate, action, timeout in (
        ("allowed", "allow", None),
        ("denied", "deny", None),
        ("asked", "ask", None),
        ("expiring", "ask", 1),
        ("hurried", "allow", None),
    ):
        token, secrets[fate] = create_token(fate, rate_per_minute=1 if fate == "hurried" else None)
        rule = {"name": fate, "action": action, "tool_glob": "*", "client": token}
        PolicyRule.objects.create(**rule, approval_timeout_seconds=timeout)
    return secrets


async def post(http: httpx.AsyncClient, port: int, secret: str, method: str, **params) -> httpx.Response:
    headers = {
        "Authorization": f"Bearer {secret}",
        "Accept": "application/json",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": method,
        "traceparent": f"00-{TRACE_ID}-00f067aa0ba902b7-01",
    }
    if "name" in params:
        headers["Mcp-Name"] = params["name"]
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": modern_envelope(**params)}
    return await http.post(f"http://127.0.0.1:{port}/mcp", json=body, headers=headers)


async def call(http, port, secret, arguments=CUSTOMER) -> dict:
    response = await post(http, port, secret, "tools/call", name="demo_lookup_customer", arguments=arguments)
    assert response.status_code == 200, response.text
    return response.json()["result"]


def decide(call_id: int, metrics_folder: str):
    """An operator's approval from a command: a process of its own, counting into the same folder."""
    env = {**os.environ, **child_database_env(), "PROMETHEUS_MULTIPROC_DIR": metrics_folder}
    decided = subprocess.run(
        [sys.executable, "manage.py", "decide", str(call_id), "approve", "--as", "ann"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert decided.returncode == 0, decided.stderr


async def calls_of_every_fate(port: int, secrets: dict[str, str], metrics_folder: str) -> int:
    """Through one web process: two calls forwarded, one denied, one rejected, one expired, one held then approved;
    and requests past a token's rate. How many of those were refused with 429."""
    async with httpx.AsyncClient(timeout=60) as http:
        held = asyncio.ensure_future(call(http, port, secrets["asked"]))
        answers = await asyncio.gather(
            call(http, port, secrets["allowed"]),
            call(http, port, secrets["allowed"]),
            call(http, port, secrets["denied"]),
            call(http, port, secrets["allowed"], {"nickname": "C007"}),
            call(http, port, secrets["expiring"]),
        )
        assert [answer.get("isError", False) for answer in answers] == [False, False, True, True, True]
        pending = Call.objects.filter(token__name="asked", status=Call.Status.PENDING)
        await eventually(pending.aexists, message="the held call")
        await asyncio.to_thread(decide, (await pending.aget()).pk, metrics_folder)
        assert not (await asyncio.wait_for(held, 30)).get("isError")
        hurried = await asyncio.gather(*(post(http, port, secrets["hurried"], "tools/list") for _ in range(3)))
    return sum(response.status_code == 429 for response in hurried)
