"""The admin's list pages at scale: the first page of each, its time and its size.

    .venv/bin/python bench/admin_pages.py [--tools 5000] [--events 1000000] [--backend sqlite|postgresql|both]

Builds, in a database of its own, one server of --tools active tools, another of as many tools
awaiting review (a server just added, its tools new), and --events audit events, all by bulk
inserts (COPY on PostgreSQL); then asks for the first page of the catalog, the big server's page,
the review list and the audit log through Django's test client, signed in as an admin, and prints
the median and slowest time of REPEAT requests after one warm-up, and the page's size.

SQLite: a file under the system's temporary directory, removed at the end. PostgreSQL: the
database `<name>_admin_pages` beside the one DATABASE_URL names (default
postgres://postgres@127.0.0.1:5432/test; that one is never touched), dropped at the end.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.machine import collector_off  # noqa: E402

REPEAT = 10
CHUNK = 20_000
PAGES = [
    ("catalog", "/catalog/"),
    ("server's page", "/servers/big/"),
    ("review list", "/review/"),
    ("audit log", "/audit/"),
]
ACTIONS = ["call.received", "call.policy", "call.pending", "call.approved", "call.forwarded", "call.completed"]


def definition(number: int, prefix: str) -> dict:
    """A tool as a real server lists one: a paragraph of description, a schema of a few fields, hints."""
    return {
        "name": f"{prefix}_{number:05d}",
        "title": f"{prefix.title()} operation {number}",
        "description": (
            f"Operation {number} of the {prefix} service. Looks records up by id or by a free-text query, "
            "returns at most `limit` of them, newest first.\nUse it before changing anything: it is cheap."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "id": {"type": "string", "description": "The record's id"},
                "query": {"type": "string", "maxLength": 200},
                "limit": {"type": "integer", "minimum": 1, "maximum": 100},
                "filters": {"type": "object", "properties": {"since": {"type": "string", "format": "date"}}},
            },
            "required": ["id"],
        },
        "annotations": {"readOnlyHint": number % 2 == 0, "openWorldHint": False},
    }


def tool_rows(server_id: int, prefix: str, count: int, status: str, now: datetime):
    for number in range(count):
        shown = definition(number, prefix)
        digest = f"{server_id:04d}{number:06d}".ljust(64, "a")
        reviewed = json.dumps(shown) if status == "active" else None
        yield (
            server_id,
            shown["name"],
            f"{prefix}_{shown['name']}",
            json.dumps(shown),
            digest,
            status,
            "",
            "[]",
            digest if reviewed else "",
            reviewed,
            now,
            now,
            now,
        )


TOOL_COLUMNS = (
    "server_id, upstream_name, exposed_name, definition, digest, status, reason, warnings, reviewed_digest, "
    "reviewed_definition, first_seen_at, last_changed_at, last_seen_at"
)
EVENT_COLUMNS = (
    "seq, at, actor_type, actor_id, actor_name, action, request_id, call_id, server_id, tool_id, token_id, "
    "data, prev_hash, hash, public_hash"
)


def event_rows(count: int, server_id: int, tool_ids: list[int], start: datetime):
    for seq in range(1, count + 1):
        call = seq // len(ACTIONS) + 1
        tool = tool_ids[call % len(tool_ids)]
        data = {"tool": f"big_{call % 5000:05d}", "arguments": {"id": f"R-{call}", "limit": 10}}
        yield (
            seq,
            start + timedelta(milliseconds=seq * 50),
            "system",
            None,
            "system",
            ACTIONS[seq % len(ACTIONS)],
            f"{call:08x}-0000-4000-8000-000000000000",
            call,
            server_id,
            tool,
            None,
            json.dumps(data),
            f"{seq - 1:064x}",
            f"{seq:064x}",
            f"{seq:064x}",
        )


def insert(table: str, columns: str, rows) -> None:
    """Bulk inserts: COPY on PostgreSQL, executemany in chunks on SQLite."""
    from django.db import connection, transaction

    rows = iter(rows)
    with transaction.atomic(), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # A month of history is backdated by design: loaded as the superuser, past the trigger refusing that.
            cursor.execute("SET session_replication_role = replica")
            with cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
            cursor.execute("SET session_replication_role = DEFAULT")
            return
        marks = ", ".join(["%s"] * len(columns.split(",")))
        while chunk := [row for _, row in zip(range(CHUNK), rows, strict=False)]:
            cursor.executemany(f"INSERT INTO {table} ({columns}) VALUES ({marks})", chunk)


def build(tools: int, events: int) -> None:
    from django.contrib.auth.models import User

    from approvals.audit.models import AuditEvent, AuditHead
    from approvals.catalog.models import Server, Tool

    now = datetime.now(UTC)
    big = Server.objects.create(name="Big", slug="big", transport="http", url="https://big.example/mcp")
    added = Server.objects.create(name="Added", slug="added", transport="http", url="https://added.example/mcp")
    insert(Tool._meta.db_table, TOOL_COLUMNS, tool_rows(big.pk, "big", tools, "active", now))
    insert(Tool._meta.db_table, TOOL_COLUMNS, tool_rows(added.pk, "added", tools, "needs_review", now))
    tool_ids = list(Tool.objects.filter(server=big).values_list("pk", flat=True))
    insert(AuditEvent._meta.db_table, EVENT_COLUMNS, event_rows(events, big.pk, tool_ids, now - timedelta(days=30)))
    AuditHead.objects.update_or_create(pk=1, defaults={"seq": events, "hash": f"{events:064x}"})
    User.objects.create_superuser("bench", password="bench")
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def measure(repeat: int) -> list[tuple[str, float, float, float, int]]:
    """Per page: the median and slowest wall time, the median CPU time of this process (the console's own
    work, without the database server's on PostgreSQL; on a shared machine the wall time also counts the
    neighbours), in ms, and the size in bytes."""
    from django.contrib.auth.models import User
    from django.test import Client

    client = Client()
    client.force_login(User.objects.get(username="bench"))
    figures = []
    for name, path in PAGES:
        response = client.get(path)
        assert response.status_code == 200, (path, response.status_code)
        walls, cpus = [], []
        with collector_off():
            for _ in range(repeat):
                wall, cpu = time.perf_counter(), time.process_time()
                response = client.get(path)
                walls.append((time.perf_counter() - wall) * 1000)
                cpus.append((time.process_time() - cpu) * 1000)
        figures.append((name, statistics.median(walls), max(walls), statistics.median(cpus), len(response.content)))
    return figures


def run_backend(backend: str, tools: int, events: int, repeat: int) -> None:
    """In a process of its own: Django is set up once, on this backend's bench database."""
    os.environ["DJANGO_SETTINGS_MODULE"] = "console.settings"
    os.environ["ALLOWED_HOSTS"] = "testserver"
    workdir = tempfile.mkdtemp(prefix="admin-pages-")
    if backend == "sqlite":
        os.environ.pop("DATABASE_URL", None)
        os.environ["SQLITE_PATH"] = str(Path(workdir) / "bench.sqlite3")
    else:
        bench_url, admin_url = database_urls(os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/test"))
        recreate(admin_url, bench_url)
        os.environ["DATABASE_URL"] = bench_url
    os.environ.pop("REDIS_URL", None)
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    started = time.perf_counter()
    build(tools, events)
    built = time.perf_counter() - started
    try:
        figures = measure(repeat)
    finally:
        from django.db import connections

        connections.close_all()
        shutil.rmtree(workdir)
        if backend == "postgresql":
            drop(admin_url, bench_url)
    print(f"\n{backend}: {tools} active tools, {tools} awaiting review, {events} audit events (built in {built:.0f} s)")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"{'page':<16}{'median ms':>10}{'max ms':>10}{'cpu ms':>10}{'bytes':>10}")
    for name, median, slowest, cpu, size in figures:
        print(f"{name:<16}{median:>10.1f}{slowest:>10.1f}{cpu:>10.1f}{size:>10}")


def database_urls(base: str) -> tuple[str, str]:
    parts = urlsplit(base)
    name = parts.path.strip("/") or "console"
    return urlunsplit(parts._replace(path=f"/{name}_admin_pages")), urlunsplit(parts._replace(path="/postgres"))


def recreate(admin_url: str, bench_url: str) -> None:
    drop(admin_url, bench_url)
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {urlsplit(bench_url).path.strip('/')}")


def drop(admin_url: str, bench_url: str) -> None:
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {urlsplit(bench_url).path.strip('/')} WITH (FORCE)")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tools", type=int, default=5000)
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--backend", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument("--repeat", type=int, default=REPEAT)
    args = parser.parse_args()
    if args.backend != "both":
        run_backend(args.backend, args.tools, args.events, args.repeat)
        return
    for backend in ("sqlite", "postgresql"):
        command = [sys.executable, __file__, "--backend", backend, "--tools", str(args.tools)]
        subprocess.run([*command, "--events", str(args.events), "--repeat", str(args.repeat)], check=True)


if __name__ == "__main__":
    main()
