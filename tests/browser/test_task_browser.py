"""An operator approves in Chromium a call that the TypeScript SDK's client follows as a task, long after that
client's own request timeout: the client collects the upstream's result."""

import json
import subprocess
import time

import pytest
from playwright.sync_api import expect

from tests.browser.queue_pages import LOOKUP, pick, queue_page, row_of
from tests.browser.queue_pages import console as queue_console  # noqa: F401 (a fixture, used by name)
from tests.fixtures.servers import NODE_DIR, node_env, require_everything

pytestmark = pytest.mark.browser
CLIENT_TIMEOUT_MS = 1500
HOLD_SECONDS = 4


def test_an_operator_approves_a_task_after_the_clients_timeout_and_the_client_gets_the_result(request, open_browser):
    console = request.getfixturevalue("queue_console")
    node = require_everything()
    ann = queue_page(open_browser(), console, "ann")
    client = subprocess.Popen(
        [
            node,
            str(NODE_DIR / "task-client.mjs"),
            console["mcp"],
            console["secret"],
            LOOKUP,
            json.dumps({"customer_id": "C007"}),
            str(CLIENT_TIMEOUT_MS),
            "task",
        ],
        cwd=str(NODE_DIR),
        env={**node_env(), "PATH": "/usr/bin:/bin"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        expect(row_of(ann)).to_be_visible()
        expect(row_of(ann).locator("[data-task]")).to_have_text("task")
        # Well past the client's own timeout for any one request.
        time.sleep(HOLD_SECONDS)
        assert client.poll() is None, client.communicate()
        pick(ann).get_by_role("button", name="Approve").click()
        expect(row_of(ann)).to_have_count(0)
        out, err = client.communicate(timeout=30)
    finally:
        if client.poll() is None:
            client.kill()
            client.wait()

    lines = [json.loads(line) for line in out.splitlines()]
    assert not [line for line in lines if line["type"] == "error"], (lines, err)
    result = next(line["result"] for line in lines if line["type"] == "result")
    assert "Customer C007" in result["content"][0]["text"]
