"""/metrics from real web processes: promtool accepts it, and its counts are the calls made through every process."""

import asyncio
import os
from contextlib import ExitStack

import pytest

from tests.fixtures.processes import web_process
from tests.fixtures.servers import free_port
from tests.observe.scraping import calls_of_every_fate, demo_console, promtool, promtool_verdict, samples, scrape, value

pytestmark = pytest.mark.django_db(transaction=True)


def made_through(ports: list[int], folder: str) -> tuple[list[str], int]:
    """Calls of every fate through each web process in turn: each one's /metrics, and the requests refused with 429."""
    secrets = demo_console()
    env = {"PROMETHEUS_MULTIPROC_DIR": folder}
    with ExitStack() as running:
        for port in ports:
            running.enter_context(web_process(port, env))
        limited = sum(asyncio.run(calls_of_every_fate(port, secrets, folder)) for port in ports)
        return [scrape(port) for port in ports], limited


def assert_counts(exposition: str, processes: int, limited: int):
    found = samples(exposition)
    for outcome, each in {"completed": 3, "denied": 1, "rejected": 1, "expired": 1}.items():
        assert value(found, "mcp_console_calls_total", server="Demo", outcome=outcome) == each * processes, outcome
    for action, each in {"allow": 2, "deny": 1, "ask": 1}.items():
        assert value(found, "mcp_console_decision_seconds_count", action=action) == each * processes, action
    assert value(found, "mcp_console_upstream_seconds_count", server="Demo") == 3 * processes
    assert value(found, "mcp_console_pending_calls") == 0
    assert limited >= 1 and value(found, "mcp_console_rate_limited_total") == limited
    living = {labels for name, labels in found if name == "process_resident_memory_bytes"}
    assert len(living) == processes, living


@pytest.mark.sqlite
def test_it_counts_the_calls_of_an_embedded_console_and_promtool_accepts_its_metrics(tmp_path):
    promtool()
    (exposition,), limited = made_through([free_port()], str(tmp_path))
    checked = promtool_verdict(exposition)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert_counts(exposition, 1, limited)


@pytest.mark.postgres
def test_it_adds_up_two_web_processes_on_postgresql_and_redis_whichever_is_scraped(tmp_path):
    promtool()
    if not os.environ.get("REDIS_URL"):
        pytest.skip("REDIS_URL is not set: two web processes share their rate limits and wake-ups through Redis")
    expositions, limited = made_through([free_port(), free_port()], str(tmp_path))
    for exposition in expositions:
        checked = promtool_verdict(exposition)
        assert checked.returncode == 0, checked.stdout + checked.stderr
        assert_counts(exposition, 2, limited)
