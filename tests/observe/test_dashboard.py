"""The Grafana dashboard under deploy/: queries Prometheus accepts, over metrics the console has."""

import json
import re

from approvals.observe import metrics
from tests.fixtures.servers import REPO
from tests.observe.scraping import promtool, promtool_run

DASHBOARD = REPO / "deploy" / "grafana-dashboard.json"
# Read at scrape time from the database (console/metrics.py).
READ_FROM_THE_DATABASE = {
    "mcp_console_pending_calls",
    "mcp_console_review_pending",
    "mcp_console_audit_verification_ok",
    "mcp_console_audit_verification_timestamp_seconds",
}
SUFFIXES = {"counter": ("_total",), "histogram": ("_bucket", "_sum", "_count"), "gauge": ("",)}


def queries() -> list[str]:
    return [target["expr"] for panel in json.loads(DASHBOARD.read_text())["panels"] for target in panel["targets"]]


def exposed_names() -> set[str]:
    made = [metrics.CALLS, metrics.DECISIONS, metrics.UPSTREAM, metrics.UPSTREAM_ERRORS, metrics.WEBHOOK_DELIVERIES]
    made.append(metrics.rate_limited_counter())
    names = {metric._name + suffix for metric in made for suffix in SUFFIXES[metric._type]}
    return names | {name for name, _ in metrics.PROCESS_GAUGES} | {"process_cpu_seconds_total"} | READ_FROM_THE_DATABASE


def test_it_ships_a_dashboard_of_queries_promtool_accepts(tmp_path):
    promtool()
    rules = [
        {"record": f"dashboard:query_{n}", "expr": q.replace("$__rate_interval", "5m")} for n, q in enumerate(queries())
    ]
    path = tmp_path / "rules.yml"
    path.write_text(json.dumps({"groups": [{"name": "dashboard", "rules": rules}]}))
    checked = promtool_run("check", "rules", str(path))
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_it_charts_only_metrics_the_console_exposes_and_every_one_of_its_own():
    charted = {name for query in queries() for name in re.findall(r"\b(?:mcp_console|process)_\w+", query)}
    assert charted <= exposed_names(), charted - exposed_names()
    own = {
        name for name in exposed_names() if name.startswith("mcp_console_") and not name.endswith(("_sum", "_count"))
    }
    assert {name.removesuffix("_bucket") for name in own - charted} <= {
        "mcp_console_audit_verification_timestamp_seconds",
    }
