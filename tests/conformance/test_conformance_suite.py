"""The official MCP conformance suite, run against the console as a client would see it.

The console fronts tests/servers/conformance_upstream.py (no prefix, an allow-all
rule, anonymous clients allowed, since the suite sends no token) and the suite's
CLI drives the console's /mcp endpoint through its whole active suite, and its
pending one. What the upstream asks mid-call reaches the suite's client only when
the server's routing passes it through, so these runs route it so; with the
default routing an operator answers it in the queue instead. The client scenarios
run one at a time, with the console as the client.

Daphne runs in a subprocess here, not in the live-server thread other tests use:
ALLOW_ANONYMOUS_CLIENTS is read by settings at startup, and the test process's
own settings must keep it off. The child reaches the test database through the
environment: SQLITE_PATH names the test file, or DATABASE_URL the test database.
"""

import json
import os
import re
import shlex
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.db import connection

from approvals.actions.servers import add_server
from approvals.calls.models import Call
from approvals.catalog.models import Server
from approvals.catalog.sync import sync_server
from approvals.inputs import requests
from approvals.inputs.models import InputRequest
from approvals.policy.models import PolicyRule
from tests.conformance.console_driver import console_driver
from tests.fixtures.processes import web_process
from tests.fixtures.servers import NODE_DIR, REPO, SERVERS, free_port, node_bin, node_env

pytestmark = pytest.mark.node

CONFORMANCE = NODE_DIR / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
NODE_MAJOR = 22
# The console as the client: console_client.py hands the suite's mock server to console_driver.py, which adds it as an
# upstream and calls its tools.
CLIENT = ["initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry"]
CONSOLE_CLIENT = Path(__file__).with_name("console_client.py")
# The client authorization scenarios of 2025-03-26, 2025-06-18 and 2025-11-25, the draft revision's, and the client
# credentials extension: the console as an OAuth client of the mock (console_oauth.py plays the admin pressing Connect).
AUTH_CLIENT = [
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
    "auth/2025-03-26-oauth-metadata-backcompat",
    "auth/2025-03-26-oauth-endpoint-fallback",
    "auth/client-credentials-basic",
    "auth/client-credentials-jwt",
    "auth/resource-mismatch",
    "auth/offline-access-scope",
    "auth/offline-access-not-supported",
]
SCENARIO_SECONDS = 60
# Each whole suite, by how many scenarios it runs one after another (the pending ones are not yet in active).
SUITES = {"active": 30, "pending": 2}
SUITE_SECONDS = 600
# The scenarios whose tool asks for a form: with the default routing an operator answers it.
ELICITATIONS = ["tools-call-elicitation", "elicitation-sep1034-defaults", "elicitation-sep1330-enums"]


@pytest.fixture
def conformance_node() -> str:
    """Node 22, with the conformance package beside it."""
    node = node_bin()
    if node is None:
        pytest.skip("Node.js is not installed; `make node-deps` installs Node 22 into tests/node")
    version = subprocess.run([node, "--version"], capture_output=True, text=True, check=True).stdout.strip()
    if int(version.lstrip("v").split(".")[0]) < NODE_MAJOR:
        pytest.skip(
            f"the conformance CLI needs Node {NODE_MAJOR}, found {version}; "
            "`make node-deps` installs it into tests/node"
        )
    if not CONFORMANCE.exists():
        pytest.skip("the conformance package is absent; run `cd tests/node && npm install`")
    return node


@pytest.fixture(scope="module")
def conformance_console(django_db_setup):
    """One console for the module's tests, started once: each test's rows are its own (console_url)."""
    port = free_port()
    env = {
        "ALLOW_ANONYMOUS_CLIENTS": "1",
        # Settings refuse anonymous clients beyond loopback hosts, whatever the caller's shell exports.
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        # With REDIS_URL set a task would otherwise wait for a worker nobody started.
        "CELERY_TASK_ALWAYS_EAGER": "1",
        # A server console_driver.py deleted is announced in the test process only: the console's sweep finds it,
        # and closes its session to the mock, which ends the scenario.
        "STALE_CALLS_INTERVAL_SECONDS": "0.5",
        # An operator's answer, given in the test process, reaches a call waiting in the console by its re-read only.
        "CALL_REREAD_SECONDS": "0.5",
    }
    with web_process(port, env):
        yield f"http://127.0.0.1:{port}/mcp"


@pytest.fixture
def console_allowing_all(transactional_db, conformance_console):
    """The console's /mcp with an allow-all rule: what the client scenarios need, console_driver.py adding the mock."""
    PolicyRule.objects.create(name="allow all", action=PolicyRule.Action.ALLOW, tool_glob="*")
    return conformance_console


@pytest.fixture(scope="module")
def driver(conformance_console):
    """Where console_client.py hands each client scenario to the test process (console_driver.py)."""
    with console_driver(conformance_console) as url:
        yield url


@pytest.fixture
def console_as_client(console_allowing_all, driver) -> dict[str, str]:
    """What the CLI's client command needs in its environment to play the console."""
    # The suite's mock servers listen without naming a host: the preload keeps them on loopback.
    return {**node_env(), "CONSOLE_CLIENT_DRIVER": driver}


@pytest.fixture
def console_url(console_allowing_all):
    """The console's /mcp fronting the conformance upstream, for the suite's server scenarios."""
    server = add_server(
        name="Conformance",
        transport=Server.Transport.STDIO,
        tool_prefix="",
        accept_tools=True,
        schedule_sync=False,
        command=shlex.join([sys.executable, str(SERVERS / "conformance_upstream.py")]),
    )
    report = sync_server(server)
    assert report.ok and not report.rejected, report.summary()
    return console_allowing_all


def run_scenario(
    node: str, target: list[str], scenario: str, output: Path, env: dict | None = None
) -> tuple[str, list[dict]]:
    """The CLI's printed report and the checks it saved; a scenario that hangs is a failed check.

    `target` is what the CLI tests: ["server", "--url", URL] or ["client", "--command", COMMAND].
    """
    argv = [node, str(CONFORMANCE), *target, "--scenario", scenario, "--output-dir", str(output)]
    try:
        done = subprocess.run(
            argv, cwd=REPO, capture_output=True, text=True, timeout=SCENARIO_SECONDS, env={**os.environ, **(env or {})}
        )
    except subprocess.TimeoutExpired:
        return "", [{"id": scenario, "status": "FAILURE", "errorMessage": f"no verdict within {SCENARIO_SECONDS}s"}]
    saved = sorted(output.rglob("checks.json"))
    checks = json.loads(saved[-1].read_text()) if saved else []
    if not checks:
        checks = [
            {
                "id": scenario,
                "status": "FAILURE",
                "errorMessage": f"the CLI exited with {done.returncode} and saved no checks",
            }
        ]
    return done.stdout + done.stderr, checks


def one_line(text: str, limit: int = 400) -> str:
    # Errors may quote a whole HTML page; the saved checks.json keeps all of it.
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "..."


def summary(results: dict[str, list[dict]]) -> str:
    lines = []
    for scenario, checks in results.items():
        failed = [c for c in checks if c["status"] == "FAILURE"]
        passed = sum(c["status"] == "SUCCESS" for c in checks)
        lines.append(f"{'✗' if failed else '✓'} {scenario}: {passed} passed, {len(failed)} failed")
        lines.extend(f"    {c['id']}: {one_line(c.get('errorMessage', ''))}" for c in failed)
    return "\n".join(lines)


def run_all(node: str, target: list[str], scenarios: list[str], tmp_path: Path, env: dict | None = None):
    results = {}
    for scenario in scenarios:
        report, results[scenario] = run_scenario(node, target, scenario, tmp_path / scenario, env)
        print(f"\n=== {scenario} ===\n{report}")
    print(f"\n=== SUMMARY ===\n{summary(results)}")
    failing = [s for s, checks in results.items() if any(c["status"] == "FAILURE" for c in checks)]
    assert not failing, f"conformance scenarios failed:\n{summary(results)}"


def test_it_passes_the_client_scenarios_with_the_console_as_the_client(conformance_node, console_as_client, tmp_path):
    command = f"{sys.executable} {CONSOLE_CLIENT}"
    run_all(conformance_node, ["client", "--command", command], CLIENT, tmp_path, console_as_client)


@pytest.mark.parametrize("scenario", AUTH_CLIENT)
def test_it_passes_the_authorization_scenarios_with_the_console_as_the_oauth_client(
    conformance_node, console_as_client, tmp_path, scenario
):
    command = f"{sys.executable} {CONSOLE_CLIENT}"
    run_all(conformance_node, ["client", "--command", command], [scenario], tmp_path, console_as_client)


def run_suite(node: str, url: str, suite: str, output: Path) -> tuple[str, dict[str, list[dict]]]:
    """The CLI's printed report of a whole suite, and the checks it saved, by scenario."""
    argv = [node, str(CONFORMANCE), "server", "--url", url, "--suite", suite, "--output-dir", str(output)]
    done = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=SUITE_SECONDS)
    results = {}
    for saved in sorted(output.glob("*/checks.json"), key=lambda path: path.stat().st_mtime):
        # Saved as server-<scenario>-<timestamp>.
        results[re.sub(r"^server-|-\d{4}-\d\d-\d\dT.*$", "", saved.parent.name)] = json.loads(saved.read_text())
    return done.stdout + done.stderr, results


@pytest.mark.parametrize("suite", SUITES)
def test_it_passes_the_whole_suite_with_input_requests_passed_to_the_client(
    conformance_node, console_url, tmp_path, suite
):
    Server.objects.filter(name="Conformance").update(input_routing=Server.InputRouting.CLIENT_IF_CAPABLE)
    report, results = run_suite(conformance_node, console_url, suite, tmp_path)
    print(f"{report}\n=== SUMMARY ===\n{summary(results)}")
    assert len(results) == SUITES[suite], f"the {suite} suite ran {len(results)} scenarios:\n{report}"
    failing = {s: c for s, c in results.items() if any(check["status"] == "FAILURE" for check in c)}
    assert not failing, f"conformance scenarios failed:\n{summary(failing)}"


def decline_what_waits(stop: threading.Event) -> int:
    """An operator declining every input request waiting in the queue until `stop`; how many it declined."""
    operator = User.objects.create(username="queue-operator")
    declined = 0
    try:
        while not stop.is_set():
            waiting = InputRequest.objects.filter(status=InputRequest.Status.PENDING, routed_to="operator")
            declined += sum(requests.answer(pk, operator, "decline").won for pk in waiting.values_list("pk", flat=True))
            stop.wait(0.1)
        return declined
    finally:
        connection.close()


def test_with_the_default_routing_an_operator_answers_the_elicitations_through_the_queue(
    conformance_node, console_url, tmp_path
):
    """The suite's client is never asked (its own checks say so); each call waits for the operator, then completes."""
    stop = threading.Event()
    with ThreadPoolExecutor(1) as operator:
        declined = operator.submit(decline_what_waits, stop)
        for scenario in ELICITATIONS:
            run_scenario(conformance_node, ["server", "--url", console_url], scenario, tmp_path / scenario)
        stop.set()

    calls = Call.objects.filter(tool__upstream_name__startswith="test_elicitation")
    assert declined.result() == len(ELICITATIONS)
    assert sorted(calls.values_list("status", flat=True)) == [Call.Status.COMPLETED] * len(ELICITATIONS)
    assert all("action=decline" in call.result["content"][0]["text"] for call in calls)
