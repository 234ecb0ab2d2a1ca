"""The audit log at a million events on PostgreSQL: a filtered page, a free-text search, exports, verification,
the report for a period and forwarding to a syslog receiver.

    .venv/bin/python bench/audit_scale.py [--events 1000000] [--keep] [--reuse]

It creates a database of its own, audit_bench, on the server DATABASE_URL names
(default postgres://postgres@127.0.0.1:5432/test; that database itself is never
touched), migrates it and loads calls and their audit events with COPY: realistic
paths (allowed, approved, edited, denied by policy or an operator, expired,
cancelled, failed upstream), a valid hash chain computed by approvals.audit.
Then it measures the console's own code: the audit page rendered through
Django's test client for several filters (median and p95 of repeated requests),
the CSV and JSONL exports of the whole log, and verification of the whole
chain, the audit report (approvals.audit_log.report) for a day, a month and
the whole year, and forwarding the whole log over syslog+tcp to a receiver in a
child process that reads each batch to its end. The database is dropped at the end unless --keep is given; --reuse
measures again what a run with --keep left.
"""

import argparse
import os
import resource
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from audit_data import BENCH_DB, bench_url, drop_database, existing_subjects, load, setup_django, subjects

REPEAT = 20


def timed(fn, repeat=REPEAT):
    fn()  # one warm-up: plans, caches
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.95) - 1]


def measure_pages(tools, tokens, operators):
    from django.contrib.auth.models import Group, User
    from django.test import Client

    from approvals import roles
    from approvals.audit.models import AuditHead
    from approvals.calls.models import Call

    roles.ensure_roles()
    auditor, _ = User.objects.get_or_create(username="bench-auditor")
    auditor.groups.set(Group.objects.filter(name=roles.AUDITOR))
    client = Client()
    client.force_login(auditor)
    middle = AuditHead.objects.get().seq // 2
    day = datetime.now(UTC) - timedelta(days=120)
    cases = [
        ("no filter", {}),
        ("tool", {"tool": tools[7].pk}),
        ("tool + decision (call.denied)", {"tool": tools[7].pk, "action": "call.denied"}),
        ("tool + decision, half-way back", {"tool": tools[7].pk, "action": "call.denied", "before": middle}),
        ("client + outcome failed", {"client": tokens[3].name, "outcome": "failed"}),
        ("operator + call.approved", {"operator": operators[2].username, "action": "call.approved"}),
        (
            "one day, 4 months ago",
            {"since": f"{day:%Y-%m-%dT00:00}", "until": f"{day + timedelta(days=1):%Y-%m-%dT00:00}"},
        ),
        ("server + call.expired", {"server": "server_1", "action": "call.expired"}),
        ("free text, rare (one order id)", {"q": f"ORD-{Call.objects.count() // 2:07d}"}),
        ("free text, common word", {"q": "urgent"}),
        ("free text + tool", {"q": "damaged", "tool": tools[3].pk}),
    ]
    results = []
    for name, query in cases:
        response = client.get("/audit/", query)
        assert response.status_code == 200, (name, response.status_code)
        shown = response.content.decode().count('<a href="/audit/events/')
        results.append((name, shown, *timed(lambda query=query: client.get("/audit/", query))))
    return results


def measure_export(fmt):
    from approvals.audit.models import AuditEvent
    from approvals.audit_log import export

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    lines = size = 0
    for chunk in export.export_chunks(AuditEvent.objects.all(), fmt):
        lines += chunk.count("\n")
        size += len(chunk)
    seconds = time.perf_counter() - start
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    rows = lines - (2 if fmt == "csv" else 1)
    return rows, seconds, size / 1e6, grown


def measure_verify(runs=3):
    """Seconds for each of `runs` verifications of the whole chain: the machine's other work shows in the spread."""
    from approvals.audit import verify

    timings = []
    for _ in range(runs):
        start = time.perf_counter()
        verdict = verify.verify_chain()
        timings.append(time.perf_counter() - start)
        assert verdict.ok, verdict.summary()
    return verdict.checked, sorted(timings)


def measure_report():
    """Seconds to build the report for the newest day, month and year of the log (median of 3)."""
    from approvals.audit.models import AuditEvent
    from approvals.audit_log import report

    newest = AuditEvent.objects.order_by("-seq").values_list("at", flat=True).first()
    results = []
    for name, days in (("a day", 1), ("30 days", 30), ("the year", 366)):
        since = newest - timedelta(days=days)
        built = report.build(since, newest + timedelta(seconds=1))
        decisions = sum(row["count"] for row in built.decisions)
        median, _ = timed(lambda since=since: report.build(since, newest + timedelta(seconds=1)), repeat=3)
        results.append((name, decisions, median))
    return results


SINK = """
import socket, sys
server = socket.create_server(("127.0.0.1", 0))
print(server.getsockname()[1], flush=True)
while True:
    conn, _ = server.accept()
    while conn.recv(1 << 20):
        pass
    conn.close()
"""


def measure_forwarding(fmt):
    """Events a second forwarded over syslog+tcp to a child process that reads everything and closes."""
    import subprocess

    from django.conf import settings

    from approvals.audit import siem_forwarding
    from approvals.audit.models import AuditForwardCursor

    sink = subprocess.Popen([sys.executable, "-c", SINK], stdout=subprocess.PIPE, text=True)
    try:
        port = int(sink.stdout.readline())
        settings.AUDIT_FORWARD_URL, settings.AUDIT_FORWARD_FORMAT = f"syslog+tcp://127.0.0.1:{port}", fmt
        AuditForwardCursor.objects.all().delete()
        start = time.perf_counter()
        forwarded = siem_forwarding.forward(budget_seconds=3600)
        seconds = time.perf_counter() - start
        assert not forwarded.error, forwarded.error
        return forwarded.sent, seconds
    finally:
        sink.kill()
        sink.wait()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--keep", action="store_true", help=f"leave the {BENCH_DB} database in place")
    parser.add_argument("--reuse", action="store_true", help=f"measure the {BENCH_DB} database a run with --keep left")
    args = parser.parse_args()
    url, admin_url = bench_url(os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/test"))
    if not args.reuse:
        drop_database(admin_url, create_again=True)
    try:
        setup_django(url)
        if args.reuse:
            tools, tokens, operators = existing_subjects()
        else:
            tools, tokens, operators = subjects()
            start = time.perf_counter()
            loaded = load(url, args.events, tools, tokens, operators)
            print(
                f"loaded {loaded:,} events with their calls in {time.perf_counter() - start:.0f} s "
                "(COPY, chain computed, indexes built)\n"
            )

        print("| audit page, filter | rows shown | median ms | p95 ms |\n|---|---:|---:|---:|")
        for name, shown, median, p95 in measure_pages(tools, tokens, operators):
            print(f"| {name} | {shown} | {median:.1f} | {p95:.1f} |")
        print(
            "\n| export of the whole log | rows | seconds | rows/s | MB | peak RSS growth MB |\n"
            "|---|---:|---:|---:|---:|---:|"
        )
        for fmt in ("csv", "jsonl"):
            rows, seconds, size, grown = measure_export(fmt)
            print(f"| {fmt} | {rows:,} | {seconds:.1f} | {rows / seconds:,.0f} | {size:.0f} | {grown:.0f} |")
        checked, timings = measure_verify()
        median = statistics.median(timings)
        print(
            "\n| verification of the whole chain | events | median s | events/s (median) | slowest–fastest run |\n"
            "|---|---:|---:|---:|---:|"
        )
        print(
            f"| 3 runs | {checked:,} | {median:.1f} | {checked / median:,.0f} "
            f"| {checked / timings[-1]:,.0f}–{checked / timings[0]:,.0f} |"
        )
        print("\n| audit report, period | decisions in it | median s |\n|---|---:|---:|")
        for name, decisions, median in measure_report():
            print(f"| {name} | {decisions:,} | {median / 1000:.2f} |")
        print("\n| forwarding the whole log over syslog+tcp | events | seconds | events/s |\n|---|---:|---:|---:|")
        for fmt in ("json", "cef"):
            sent, seconds = measure_forwarding(fmt)
            print(f"| {fmt} | {sent:,} | {seconds:.1f} | {sent / seconds:,.0f} |")
        print(f"\nload average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    finally:
        if not (args.keep or args.reuse):
            drop_database(admin_url)


if __name__ == "__main__":
    main()
