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
import json
import os
import random
import resource
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

BENCH_DB = "audit_bench"
SERVERS, TOOLS_PER_SERVER, CLIENTS, OPERATORS = 4, 10, 25, 8
WORDS = ["refund", "invoice", "late", "damaged", "urgent", "customer", "order", "review", "export", "weekly"]
REPEAT = 20


def bench_url(base):
    parts = urlsplit(base)
    return urlunsplit(parts._replace(path="/" + BENCH_DB)), urlunsplit(parts._replace(path="/postgres"))


def drop_database(admin_url, create_again=False):
    with psycopg.connect(admin_url, autocommit=True) as conn:
        # FORCE: the console's connection pool may still hold connections to it.
        conn.execute(f"DROP DATABASE IF EXISTS {BENCH_DB} WITH (FORCE)")
        if create_again:
            conn.execute(f"CREATE DATABASE {BENCH_DB}")


def setup_django(url):
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")
    os.environ["ALLOWED_HOSTS"] = "testserver"
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def subjects():
    """Servers with tools, client tokens and operators, made through the ORM: they are few."""
    from django.contrib.auth.models import User

    from approvals.catalog.models import Server, Tool
    from approvals.tokens.models import ClientToken

    tools = []
    for s in range(SERVERS):
        server = Server.objects.create(
            name=f"Server {s}",
            slug=f"server_{s}",
            transport="http",
            url=f"https://s{s}.example/mcp",
            tool_prefix=f"s{s}_",
        )
        for t in range(TOOLS_PER_SERVER):
            definition = {"name": f"tool_{t}", "inputSchema": {"type": "object"}}
            tools.append(
                Tool.objects.create(
                    server=server,
                    upstream_name=f"tool_{t}",
                    exposed_name=f"s{s}_tool_{t}",
                    definition=definition,
                    digest=f"{s:02d}{t:02d}".ljust(64, "0"),
                )
            )
    tokens = [ClientToken.objects.create(name=f"client-{c}", tool_globs=["*"]) for c in range(CLIENTS)]
    operators = [User.objects.create_user(f"operator-{o}") for o in range(OPERATORS)]
    return tools, tokens, operators


def existing_subjects():
    """What subjects() made, in a database a run with --keep left."""
    from django.contrib.auth.models import User

    from approvals.catalog.models import Tool
    from approvals.tokens.models import ClientToken

    operators = list(User.objects.filter(username__startswith="operator-").order_by("pk"))
    return list(Tool.objects.order_by("pk")), list(ClientToken.objects.order_by("pk")), operators


def call_story(rng):
    """(policy action, the steps after it, edited?) for one call, in realistic proportions."""
    roll = rng.random()
    upstream = ["forwarded", "failed" if rng.random() < 0.05 else "completed"]
    if roll < 0.10:
        return "deny", ["denied_by_policy"], False
    if roll < 0.45:
        return "allow", upstream, False
    roll = rng.random()
    if roll < 0.60:
        edited = rng.random() < 0.1
        return "ask", ["pending"] + (["edited"] if edited else []) + ["approved"] + upstream, edited
    if roll < 0.85:
        return "ask", ["pending", "denied"], False
    return "ask", ["pending", "expired" if roll < 0.95 else "cancelled"], False


def generate(count, tools, tokens, operators, seed=1):
    """Yields (call row fields, [event rows]) until `count` events; event rows lack seq, at and hashes."""
    rng = random.Random(seed)
    produced, call_id = 0, 0
    while produced < count:
        call_id += 1
        tool, token = rng.choice(tools), rng.choice(tokens)
        operator = rng.choice(operators)
        arguments = {
            "order_id": f"ORD-{call_id:07d}",
            "amount": round(rng.uniform(1, 900), 2),
            "note": " ".join(rng.sample(WORDS, 3)),
        }
        action, steps, edited = call_story(rng)
        final_arguments = {**arguments, "amount": 1.0} if edited else arguments
        request_id = f"{call_id:08x}-0000-4000-8000-000000000000"
        base = (request_id, call_id, tool.server_id, tool.pk, token.pk)
        events = [
            (
                "client",
                token.pk,
                token.name,
                "call.received",
                *base,
                {"tool": tool.exposed_name, "arguments": arguments},
            ),
            ("system", None, "system", "call.policy", *base, {"action": action, "rule": "bench rule"}),
        ]
        for step in steps:
            by_operator = step in ("approved", "denied", "edited")
            actor = ("user", operator.pk, operator.username) if by_operator else ("system", None, "system")
            data = {
                "pending": {"expires_at": "2026-01-01T00:10:00+00:00"},
                "edited": {"before": arguments, "after": final_arguments},
                "approved": {"reason": ""},
                "denied": {"reason": "not without a ticket"},
                "denied_by_policy": {"reason": "blocked", "rule": "bench rule"},
                "forwarded": {"arguments": final_arguments},
                "completed": {
                    "result": {
                        "isError": False,
                        "content_types": ["text"],
                        "structured": False,
                        "bytes": rng.randint(50, 5000),
                    },
                    "error": "",
                    "latency_ms": round(rng.uniform(5, 900), 1),
                },
                "failed": {
                    "result": {"isError": True, "content_types": ["text"], "structured": False, "bytes": 120},
                    "error": "connection refused",
                    "latency_ms": round(rng.uniform(5, 900), 1),
                },
                "expired": {"reason": "no operator decided within 10 minutes"},
                "cancelled": {"reason": "the client closed the request"},
            }[step]
            name = "call.denied" if step == "denied_by_policy" else f"call.{step}"
            events.append((*actor, name, *base, data))
        status = "denied" if steps[-1] == "denied_by_policy" else steps[-1]
        decided = next((e for e in events if e[3] in ("call.approved", "call.denied") and e[0] == "user"), None)
        call = {
            "id": call_id,
            "token_id": token.pk,
            "tool_id": tool.pk,
            "server_id": tool.server_id,
            "tool_name": tool.exposed_name,
            "request_id": request_id,
            "arguments": arguments,
            "edited_arguments": final_arguments if edited else None,
            "status": status,
            "policy_action": action,
            "decided_by_id": decided[1] if decided else None,
            "decided_by_name": decided[2] if decided else ("policy" if action != "ask" else ""),
        }
        produced += len(events)
        yield call, events


def load(url, count, tools, tokens, operators):
    """COPY the calls and the events (with their chain) in; secondary indexes are built afterwards."""
    from django.db import connection

    from approvals.audit import chain
    from approvals.audit.models import AuditHead
    from approvals.calls.models import Call

    call_fields = Call._meta.concrete_fields
    event_columns = ["seq", "at", *chain.HASHED[2:11], "data", "prev_hash", "hash"]
    started = datetime.now(UTC) - timedelta(days=365)
    step = timedelta(days=365) / count
    seq, prev = 0, AuditHead.GENESIS
    connection.ensure_connection()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'approvals_auditevent' "
            "AND indexname NOT IN ('approvals_auditevent_pkey', 'approvals_auditevent_seq_key')"
        )
        indexes = cursor.fetchall()
        for name, _ in indexes:
            cursor.execute(f"DROP INDEX {name}")
        # A year of history is backdated by design: loaded as the superuser, past the trigger refusing that.
        cursor.execute("SET session_replication_role = replica")
    # One COPY at a time per connection: the calls go through a second one.
    with (
        psycopg.connect(url) as calls_conn,
        calls_conn.cursor() as calls_cursor,
        connection.connection.cursor() as events_cursor,
        calls_cursor.copy(f"COPY approvals_call ({', '.join(f.column for f in call_fields)}) FROM STDIN") as calls_copy,
        events_cursor.copy(f"COPY approvals_auditevent ({', '.join(event_columns)}) FROM STDIN") as events_copy,
    ):
        for call, events in generate(count, tools, tokens, operators):
            received = started + step * seq
            obj = Call(
                received_at=received,
                era="modern",
                protocol_version="2026-07-28",
                arguments_digest="0" * 64,
                tool_digest="0" * 64,
                **call,
            )
            calls_copy.write_row([f.get_db_prep_save(getattr(obj, f.attname), connection) for f in call_fields])
            for event in events:
                seq += 1
                row = (seq, started + step * seq, *event, prev)
                prev = chain.event_hash(row)
                events_copy.write_row([*row[:11], json.dumps(row[11]), row[12], prev])
                if seq == count:
                    break
    with connection.cursor() as cursor:
        cursor.execute("SET session_replication_role = DEFAULT")
        for _, definition in indexes:
            cursor.execute(definition)
        cursor.execute(
            "SELECT setval(pg_get_serial_sequence('approvals_call', 'id'), (SELECT max(id) FROM approvals_call))"
        )
    AuditHead.objects.update_or_create(pk=1, defaults={"seq": seq, "hash": prev})
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE approvals_auditevent")
        cursor.execute("VACUUM ANALYZE approvals_call")
    return seq


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

    from approvals.audit import forwarding
    from approvals.audit.models import AuditForwardCursor

    sink = subprocess.Popen([sys.executable, "-c", SINK], stdout=subprocess.PIPE, text=True)
    try:
        port = int(sink.stdout.readline())
        settings.AUDIT_FORWARD_URL, settings.AUDIT_FORWARD_FORMAT = f"syslog+tcp://127.0.0.1:{port}", fmt
        AuditForwardCursor.objects.all().delete()
        start = time.perf_counter()
        forwarded = forwarding.forward(budget_seconds=3600)
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
