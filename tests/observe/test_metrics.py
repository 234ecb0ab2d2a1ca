"""What the metrics count and when, who may scrape them, and the files behind them."""

import os
import signal
import subprocess
import sys
import uuid

import pytest
from django.db import transaction
from django.utils import timezone

from approvals.audit.models import AuditVerification
from approvals.calls import lifecycle, permissions
from approvals.calls.models import Call
from approvals.catalog.models import Tool
from approvals.observe import metrics
from approvals.policy.models import PolicyRule
from approvals.protocol import revisions
from approvals.upstream import UpstreamError
from tests.fixtures.calls import pending_call
from tests.fixtures.catalog import make_server, make_tool
from tests.fixtures.servers import REPO
from tests.fixtures.waiting import wait_until
from tests.observe.scraping import collected, samples, value

TOKEN = "scrape-me-3f9a"


class RolledBack(Exception):
    pass


def scraped(client, **headers):
    response = client.get("/metrics", **headers)
    assert response.status_code == 200, response.content
    return samples(response.content.decode())


def unique_server(**fields):
    mark = uuid.uuid4().hex[:8]
    return make_server(name=f"Shop {mark}", slug=f"shop_{mark}", tool_prefix=f"s{mark}_", **fields)


def test_it_counts_a_denied_call_once_its_transaction_commits_and_nothing_of_one_rolled_back(
    transactional_db, client_token
):
    server = unique_server()
    tool = make_tool(server, "wipe")
    PolicyRule.objects.create(name="no wiping", action="deny", tool_glob="*")
    ctx = lifecycle.ClientContext(client_token, revisions.MODERN, "2026-07-28")
    with pytest.raises(RolledBack), transaction.atomic():
        lifecycle.receive_call(ctx, tool, {}, 1, None)
        raise RolledBack
    assert value(collected(), "mcp_console_calls_total", server=server.name, outcome="denied") == 0
    lifecycle.receive_call(ctx, tool, {}, 2, None)
    found = collected()
    assert value(found, "mcp_console_calls_total", server=server.name, outcome="denied") == 1


def test_it_counts_a_permission_request_a_rule_allows_once(db, client_token, monkeypatch):
    ended = []
    monkeypatch.setattr(metrics, "call_ended", lambda server, outcome: ended.append((server, outcome)))
    PolicyRule.objects.create(name="listing is fine", action="allow", tool_glob="Bash", applies_to="permission")
    ctx = lifecycle.ClientContext(client_token, revisions.MODERN, "2026-07-28")

    call, answer = permissions.receive_permission(ctx, "Bash", {"command": "ls"}, "toolu_1", 1, None)

    assert call.status == Call.Status.COMPLETED and answer is not None
    assert ended == [("", "completed")]


def test_it_reads_pending_calls_reviews_and_the_last_verification_from_the_database(client, db, client_token):
    server = unique_server()
    pending_call(client_token, make_tool(server, "refund", inputSchema={"type": "object"}))
    make_tool(server, "changed", status=Tool.Status.NEEDS_REVIEW)
    AuditVerification.objects.create(ok=False, finished_at=timezone.now(), run_by="system")
    found = scraped(client)
    assert value(found, "mcp_console_pending_calls") == 1
    assert value(found, "mcp_console_review_pending") == 1
    assert value(found, "mcp_console_audit_verification_ok") == 0
    AuditVerification.objects.create(ok=True, finished_at=timezone.now(), run_by="system")
    assert value(scraped(client), "mcp_console_audit_verification_ok") == 1


def test_it_answers_a_loopback_scraper_whatever_host_it_names(client, db):
    response = client.get("/metrics", HTTP_HOST="web:8000")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain; version=")


@pytest.mark.parametrize(
    "where", [{"REMOTE_ADDR": "10.0.0.9"}, {"HTTP_X_FORWARDED_FOR": "10.0.0.9"}], ids=["remote", "proxied"]
)
def test_it_refuses_anyone_but_a_direct_loopback_client_without_a_token(client, db, where):
    response = client.get("/metrics", **where)
    assert response.status_code == 403
    assert "METRICS_TOKEN" in response.content.decode()


def test_it_asks_for_the_metrics_token_when_one_is_set_and_refuses_a_wrong_one(client, db, settings):
    settings.METRICS_TOKEN = TOKEN
    missing = client.get("/metrics")
    assert missing.status_code == 401 and missing["WWW-Authenticate"] == "Bearer"
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer nope").status_code == 403
    assert client.get("/metrics", HTTP_AUTHORIZATION="Basic " + TOKEN).status_code == 403
    found = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}", REMOTE_ADDR="10.0.0.9")
    assert found.status_code == 200


def test_it_answers_get_only(client, db):
    assert client.post("/metrics").status_code == 405


def test_it_says_so_when_the_metric_files_cannot_be_read(client, db, tmp_path, monkeypatch):
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path / "gone"))
    response = client.get("/metrics")
    assert response.status_code == 503
    assert "could not be read" in response.content.decode()


SAMPLED = (
    "import django, sys, time; django.setup(); from approvals.observe import metrics; "
    "metrics.watch_this_process(); print(metrics.process_id(), flush=True); time.sleep(float(sys.argv[1]))"
)


def sampled_process(folder, seconds: float) -> subprocess.Popen:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "console.settings", "PROMETHEUS_MULTIPROC_DIR": str(folder)}
    return subprocess.Popen(
        [sys.executable, "-c", SAMPLED, str(seconds)], cwd=REPO, env=env, stdout=subprocess.PIPE, text=True
    )


def live_ids(folder) -> set[str]:
    return {dict(labels)["pid"] for name, labels in collected(folder) if name == "process_resident_memory_bytes"}


def test_it_shows_each_living_process_and_forgets_those_killed_or_ended(tmp_path, monkeypatch):
    killed, ended = sampled_process(tmp_path, 60), sampled_process(tmp_path, 0.5)
    killed_id, ended_id = killed.stdout.readline().strip(), ended.stdout.readline().strip()
    assert ended.wait(30) == 0
    wait_until(lambda: killed_id in live_ids(tmp_path), message="the living process's sample")
    assert ended_id not in live_ids(tmp_path)
    killed.send_signal(signal.SIGKILL)
    killed.wait(30)
    assert killed_id in live_ids(tmp_path), "a killed process says nothing as it dies"
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    metrics.forget_dead_processes()
    assert live_ids(tmp_path) == set()


def test_it_clears_the_metric_files_and_nothing_else(tmp_path):
    for name in ("counter_web-1.db", "histogram_web-1.db", "gauge_liveall_web-1.db", "notes.db", "README"):
        (tmp_path / name).write_bytes(b"")
    (tmp_path / "counter_folder.db").mkdir()
    assert metrics.clear(str(tmp_path)) == 3
    assert sorted(path.name for path in tmp_path.iterdir()) == ["README", "counter_folder.db", "notes.db"]


def test_it_counts_upstream_failures_by_kind_and_times_every_answer():
    server = f"upstream-{uuid.uuid4().hex[:8]}"
    metrics.upstream_answered(server, 0.2)
    metrics.upstream_answered(server, 30.0, TimeoutError())
    metrics.upstream_answered(server, 0.1, UpstreamError("connection refused", retryable=True))
    metrics.upstream_answered(server, 0.1, UpstreamError("Invalid params", code=-32602))
    metrics.upstream_answered(server, 0.1, UpstreamError("not JSON"))
    metrics.upstream_answered(server, 0.3, "malformed")
    found = collected()
    kinds = {"timeout", "unavailable", "refused", "protocol", "malformed"}
    assert {
        kind: value(found, "mcp_console_upstream_errors_total", server=server, kind=kind) for kind in kinds
    } == dict.fromkeys(kinds, 1)
    assert value(found, "mcp_console_upstream_seconds_count", server=server) == 6
    assert value(found, "mcp_console_upstream_seconds_bucket", server=server, le="0.25") == 4
