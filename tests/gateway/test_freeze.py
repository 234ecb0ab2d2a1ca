"""A schema that costs the most to check never stalls the console: its web process keeps answering others.

The console runs as production runs it, a web process of its own, so that a
stalled interpreter there cannot stall the test that measures it.
"""

import json
import shlex
import statistics
import subprocess
import sys
import time

import pytest

from approvals.policy.models import PolicyRule
from approvals.protocol.schemas import MAX_MATCHED_CHARS, MAX_SECONDS
from approvals.tokens import credentials
from tests.fixtures.processes import web_process
from tests.fixtures.servers import REPO, SERVERS, free_port
from tests.gateway.conftest import Raw

pytestmark = pytest.mark.django_db(transaction=True)

# Letters and a "!": a backtracking matcher tries every split of the letters against the slug rule.
PATHOLOGICAL = "a" * (MAX_MATCHED_CHARS - 1) + "!"
PING_BUDGET_SECONDS = 0.1
# A backtracking matcher holds the interpreter for seconds on these strings (minutes at full length); a
# scheduler pause on a busy machine does not reach this, so the bound tells the two apart.
FREEZE_SECONDS = 1.0
WINDOW_SECONDS = 1.5
CALL_TIMEOUT_SECONDS = 20


@pytest.fixture
def costly_url(add_fixed_server):
    """/mcp of a web process whose upstream `costly` lists the tools of tests/servers/stdio_scenarios.py."""
    command = shlex.join([sys.executable, str(SERVERS / "stdio_scenarios.py"), "costly"])
    add_fixed_server("costly", transport="stdio", command=command)
    PolicyRule.objects.create(name="let every call through", action="allow", tool_glob="*")
    port = free_port()
    # The pings alone make more requests a minute than a token may.
    with web_process(port, env={"MCP_RATE_LIMIT_PER_MINUTE": "100000"}):
        yield f"http://127.0.0.1:{port}/mcp"


def pings_during_calls(url, tool, arguments) -> list[float]:
    """How long each of another client's pings took while `tool` was called again and again for a while."""
    caller = Raw(url, credentials.create_token("caller")[1])
    pinger = Raw(url, credentials.create_token("pinger")[1])
    # Modules a first call imports, and the upstream process it starts, are not what is measured.
    assert caller.modern("tools/call", name="costly_name", arguments={"slug": "ok"}).status_code == 200
    session = pinger.initialize()
    pinging = subprocess.Popen(
        [sys.executable, "-m", "tests.fixtures.pinger", url, pinger.headers["Authorization"][7:], session],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert pinging.stdout.readline().strip() == "ready"
        started, calls = time.monotonic(), 0
        while calls < 2 or time.monotonic() - started < WINDOW_SECONDS:
            answer = caller.modern("tools/call", name=tool, arguments=arguments, timeout=CALL_TIMEOUT_SECONDS)
            assert answer.status_code == 200, answer.text[:300]
            calls += 1
        report, _ = pinging.communicate(timeout=CALL_TIMEOUT_SECONDS * 2)
    finally:
        pinging.kill()
        pinging.wait()
    measured = json.loads(report)
    assert not measured["failures"]
    return measured["latencies"]


@pytest.mark.parametrize(
    "tool, arguments",
    [("costly_name", {"slug": PATHOLOGICAL}), ("costly_echo", {"text": PATHOLOGICAL})],
    ids=["inputSchema", "outputSchema"],
)
def test_it_answers_another_clients_ping_within_100_ms_while_it_matches_a_pathological_pattern(
    costly_url, tool, arguments
):
    latencies = pings_during_calls(costly_url, tool, arguments)

    assert statistics.median(latencies) < PING_BUDGET_SECONDS, (
        f"the median ping took {statistics.median(latencies) * 1000:.0f} ms"
    )
    assert max(latencies) < FREEZE_SECONDS, f"the slowest ping took {max(latencies) * 1000:.0f} ms"
    assert len(latencies) >= 10


def test_it_answers_pings_while_an_upstream_result_takes_the_whole_validation_budget(costly_url):
    latencies = pings_during_calls(costly_url, "costly_tangle", {})

    # Checked on the event loop, a result would hold the ping sent as its check began for nearly the
    # whole budget. In a thread, what still delays a ping is the interpreter's own pauses: a full
    # garbage collection of the validator's objects, a few tenths of a second at most.
    assert max(latencies) < MAX_SECONDS * 0.75, f"the slowest ping took {max(latencies) * 1000:.0f} ms"
    assert len(latencies) >= 10
