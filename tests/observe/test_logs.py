"""LOG_FORMAT=json: a web process's every line is a JSON object, and a call's lines say which call they are about."""

import asyncio
import json

import httpx
import pytest

from tests.fixtures.processes import start_console, web_process
from tests.fixtures.servers import free_port
from tests.observe.scraping import TRACE_ID, calls_of_every_fate, demo_console

pytestmark = pytest.mark.django_db(transaction=True)


def mistakes(port: int):
    """Requests that go wrong on the client's side, each logged by the console."""
    base = f"http://127.0.0.1:{port}"
    assert httpx.post(f"{base}/mcp", json={}, headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert httpx.get(f"{base}/calls/999999/").status_code == 302
    assert httpx.get(f"{base}/no-such-page/").status_code == 404
    assert httpx.get(f"{base}/metrics", headers={"X-Forwarded-For": "10.0.0.9"}).status_code == 403


def test_it_writes_every_line_as_a_json_object_naming_the_call_token_server_and_trace(tmp_path):
    secrets = demo_console()
    port, metrics_folder = free_port(), str(tmp_path / "metrics")
    env = {
        "LOG_FORMAT": "json",
        "LOG_LEVEL": "INFO",
        "PROMETHEUS_MULTIPROC_DIR": metrics_folder,
    }
    # The worker's stop (its demo servers' sessions closed) may outlast the recipe's 5 s on a slow machine: time
    # enough for it, so that no kill cuts a line short.
    serving = {"options": ("--workers-kill-timeout", "30"), "grace": 60}
    with (tmp_path / "console.log").open("wb") as output, web_process(port, env, output=output, **serving):
        asyncio.run(calls_of_every_fate(port, secrets, metrics_folder))
        mistakes(port)
    lines = (tmp_path / "console.log").read_text().splitlines()
    assert len(lines) > 20, lines
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            pytest.fail(f"not a JSON line: {line!r}")
        assert isinstance(entry, dict) and {"time", "level", "logger", "message"} <= entry.keys(), line
    entries = [json.loads(line) for line in lines]
    ended = [entry for entry in entries if entry.get("outcome") == "completed"]
    assert len(ended) == 3
    assert {(entry["server"], entry["token"], entry["trace_id"]) for entry in ended} == {
        ("Demo", "allowed", TRACE_ID),
        ("Demo", "asked", TRACE_ID),
    }
    assert all(isinstance(entry["call_id"], int) for entry in ended)
    assert any(entry["logger"] == "console.access" and entry["status"] == 404 for entry in entries)
    assert any(entry["level"] == "warning" and entry["message"] == "Unauthorized: /mcp" for entry in entries)


def test_it_writes_the_web_servers_own_lines_as_json_objects_too(tmp_path):
    port = free_port()
    # At granian's level info its main process says it starts, listens and spawns its worker.
    serving = {"options": ("--log-level", "info")}
    with (tmp_path / "console.log").open("wb") as output, web_process(port, {"LOG_FORMAT": "json"}, output, **serving):
        assert httpx.get(f"http://127.0.0.1:{port}/healthz").status_code == 200
    lines = (tmp_path / "console.log").read_text().splitlines()
    for line in lines:
        try:
            json.loads(line)
        except ValueError:
            pytest.fail(f"not a JSON line: {line!r}")
    granians = [json.loads(line) for line in lines if json.loads(line)["logger"] == "_granian"]
    assert any("worker" in entry["message"].lower() for entry in granians), lines


def test_it_refuses_to_start_with_a_log_format_it_does_not_know():
    started = start_console(LOG_FORMAT="yaml")
    assert started.returncode != 0
    assert "LOG_FORMAT must be text or json, not 'yaml'" in started.stderr
