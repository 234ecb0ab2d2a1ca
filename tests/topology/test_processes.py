"""The production topology as plain processes: two web processes, a celery worker, PostgreSQL and Redis."""

import asyncio
import os
import subprocess
import sys

import httpx
import pytest

from approvals import demo
from approvals.actions import servers
from approvals.actions.revocation import revoke_token
from approvals.calls.models import Call
from approvals.catalog import sync
from approvals.catalog.models import Tool
from approvals.tokens.credentials import create_token
from console.celery import app
from tests.fixtures.gateway import sdk_client
from tests.fixtures.people import PASSWORD, make_user
from tests.fixtures.processes import celery_worker, child_database_env, web_process
from tests.fixtures.servers import free_port
from tests.fixtures.waiting import a_minute_with_time_to_spare, eventually, wait_until
from tests.gateway.conftest import Raw

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def redis_required():
    if not os.environ.get("REDIS_URL"):
        pytest.skip("REDIS_URL is not set: the production topology needs Redis")


@pytest.fixture
def tasks_go_to_the_worker(redis_required):
    app.conf.task_always_eager = False
    yield
    app.conf.task_always_eager = True


def logged_in(base_url, username, password):
    client = httpx.Client(base_url=base_url, follow_redirects=True, timeout=10)
    client.get("/login/")
    response = client.post(
        "/login/",
        data={"username": username, "password": password, "csrfmiddlewaretoken": client.cookies["csrftoken"]},
        headers={"Referer": f"{base_url}/login/"},
    )
    assert response.url.path != "/login/", "login failed"
    return client


def test_it_syncs_a_new_server_in_the_worker_and_every_web_process_shows_its_tools(tasks_go_to_the_worker):
    make_user("root", superuser=True)
    web = [free_port(), free_port()]
    with celery_worker(), web_process(web[0]), web_process(web[1]):
        server = servers.add_server(
            name="Demo",
            transport="stdio",
            command=demo.COMMAND_LINE,
            accept_tools=True,
        )
        wait_until(
            lambda: Tool.objects.filter(server=server, status="active").count() >= 5,
            timeout=30,
            message="the worker's sync",
        )
        for port in web:
            page = logged_in(f"http://127.0.0.1:{port}", "root", PASSWORD).get("/catalog/")
            assert page.status_code == 200
            assert "demo_lookup_customer" in page.text and "demo_issue_refund" in page.text


@pytest.mark.parametrize("mode", ["auto", "legacy"], ids=["modern", "legacy"])
def test_it_answers_a_held_call_once_another_process_approves_it(redis_required, mode):
    """The wake-up crosses processes through Redis: the waiting side would re-read its row only after a minute."""
    make_user("ann", superuser=True)
    _, secret = create_token("agent")
    server = servers.add_server(
        name="Demo",
        transport="stdio",
        command=demo.COMMAND_LINE,
        accept_tools=True,
        schedule_sync=False,
    )
    assert sync.sync_server(server).ok
    port = free_port()

    async def call_and_wait_for_decision():
        async with sdk_client(f"http://127.0.0.1:{port}/mcp", secret, mode) as client:
            answer = asyncio.create_task(client.call_tool("demo_lookup_customer", {"customer_id": "C007"}))
            await eventually(Call.objects.filter(status=Call.Status.PENDING).aexists, message="a held call")
            # A real pause, not a wait: the call must stay unanswered while time passes with no decision.
            await asyncio.sleep(0.3)
            assert not answer.done(), "a held call must not be answered before a decision"
            call = await Call.objects.aget()
            decided = await asyncio.to_thread(
                subprocess.run,
                [sys.executable, "manage.py", "decide", str(call.pk), "approve", "--as", "ann"],
                env={**os.environ, **child_database_env()},
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert decided.returncode == 0, decided.stderr
            return await asyncio.wait_for(answer, timeout=15)

    with web_process(port, {"CALL_REREAD_SECONDS": "60", "CALL_LEASE_SECONDS": "600"}):
        result = asyncio.run(call_and_wait_for_decision())
    assert not result.is_error
    assert "C007" in " ".join(block.text for block in result.content if block.type == "text")


def listed(port: int, secret: str) -> httpx.Response:
    client = Raw(f"http://127.0.0.1:{port}/mcp", secret)
    try:
        return client.modern("tools/list")
    finally:
        client.client.close()


def test_it_counts_a_tokens_rate_across_processes_and_refuses_it_everywhere_once_revoked_elsewhere(redis_required):
    """Each process admits a kept token on its event loop: the rate's count and the token's revocation still reach
    every process at once."""
    _, counted = create_token("counted", rate_per_minute=6)
    revoked, secret = create_token("revoked")
    web = [free_port(), free_port()]
    with web_process(web[0]), web_process(web[1]):
        a_minute_with_time_to_spare()
        statuses = [listed(port, counted).status_code for port in web * 4]
        # Its first request notes the token's use; each later one finds it kept.
        assert [listed(port, secret).status_code for port in web * 2] == [200] * 4
        revoke_token(revoked)
        refusals = [listed(port, secret) for port in web]

    assert statuses == [200] * 6 + [429] * 2
    assert [response.status_code for response in refusals] == [401, 401]
    assert all("was revoked" in response.json()["error"]["message"] for response in refusals)
