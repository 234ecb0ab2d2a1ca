"""An OAuth authorization response's code and state reach neither the access log nor a trace's URL attributes:
whoever reads either could otherwise finish someone's Connect, or replay the console's own sign-in."""

import asyncio
import json

import httpx
import pytest

from approvals.observe import logs
from approvals.observe.redaction import redacted
from tests.fixtures.processes import web_process
from tests.fixtures.servers import free_port
from tests.fixtures.waiting import wait_until
from tests.observe.otlp import Collector, serving

CODE, STATE = "c0de-4f3e-secret", "st4te-9a1b-secret"
CALLBACKS = [
    f"/oauth/upstream/callback?code={CODE}&state={STATE}&iss=https%3A%2F%2Fauth.example",
    f"/login/sso/callback/?state={STATE};code={CODE}",
]


def test_it_redacts_the_secret_parameters_of_a_url_a_request_line_or_a_query():
    assert redacted(f"GET {CALLBACKS[0]}") == (
        "GET /oauth/upstream/callback?code=[redacted]&state=[redacted]&iss=https%3A%2F%2Fauth.example"
    )
    assert redacted(f"code={CODE}&STATE={STATE}&x=1") == "code=[redacted]&STATE=[redacted]&x=1"
    assert redacted("https://h/p?access_token=a&barcode=1&client_secret=s") == (
        "https://h/p?access_token=[redacted]&barcode=1&client_secret=[redacted]"
    )


async def refused(scope, receive, send):
    await send({"type": "http.response.start", "status": 400, "headers": []})
    await send({"type": "http.response.body", "body": b"0123456789"})


async def sent_nowhere(message):
    pass


def test_the_access_log_names_no_code_or_state(caplog):
    caplog.set_level("INFO", logger="console.access")
    for url in CALLBACKS:
        path, _, query = url.partition("?")
        scope = {"type": "http", "method": "GET", "path": path, "query_string": query.encode(), "headers": []}
        asyncio.run(logs.access_logged(refused)({**scope, "client": ("127.0.0.1", 5000)}, None, sent_nowhere))
    lines = [record.getMessage() for record in caplog.records if record.name == "console.access"]
    assert len(lines) == 2, lines
    assert lines[0].startswith('127.0.0.1:5000 "GET /oauth/upstream/callback?code=[redacted]&state=[redacted]&iss=')
    assert lines[0].endswith('" 400 10')
    assert not [line for line in lines if CODE in line or STATE in line]


def attributes(spans) -> list[tuple[str, str]]:
    return [(item.key, item.value.string_value) for span in spans for item in span.attributes]


@pytest.mark.django_db(transaction=True)
def test_a_console_logging_json_and_tracing_keeps_no_code_or_state_of_a_callback(tmp_path):
    spans = []
    port = free_port()
    with serving(Collector, spans=spans) as collector, (tmp_path / "console.log").open("wb") as output:
        env = {
            "LOG_FORMAT": "json",
            "LOG_LEVEL": "INFO",
            "PROMETHEUS_MULTIPROC_DIR": str(tmp_path),
            "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{collector}",
            "OTEL_BSP_SCHEDULE_DELAY": "100",
        }
        with web_process(port, env, output=output):
            for path in CALLBACKS:
                httpx.get(f"http://127.0.0.1:{port}{path}")
            wait_until(
                lambda: sum(name == "http.url" and "callback" in value for name, value in attributes(spans)) >= 2,
                message="the callbacks' server spans",
            )
    urls = [value for name, value in attributes(spans) if name in ("http.url", "http.target", "url.full", "url.query")]
    assert any("code=[redacted]" in url for url in urls), urls
    assert not [value for _, value in attributes(spans) if CODE in value or STATE in value]
    log = (tmp_path / "console.log").read_text()
    entries = [json.loads(line) for line in log.splitlines()]
    assert [entry for entry in entries if "callback" in entry.get("request_line", "")]
    assert CODE not in log and STATE not in log
