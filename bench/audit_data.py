"""A PostgreSQL database of its own for bench/audit_scale.py, loaded with calls and a valid audit chain by COPY."""

import json
import os
import random
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

BENCH_DB = "audit_bench"
SERVERS, TOOLS_PER_SERVER, CLIENTS, OPERATORS = 4, 10, 25, 8
WORDS = ["refund", "invoice", "late", "damaged", "urgent", "customer", "order", "review", "export", "weekly"]


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
    from django.core.cache import caches
    from django.db import connection

    from approvals.audit import encoding, witness
    from approvals.audit.models import AuditHead
    from approvals.audit.public_chain import public_chain_value
    from approvals.calls.models import Call

    call_fields = Call._meta.concrete_fields
    event_columns = ["seq", "at", *encoding.HASHED[2:11], "data", "prev_hash", "hash", "public_hash"]
    # The witness of an earlier run's database of the same name would find this one's end cut.
    caches["audit_witness"].delete(witness.key())
    started = datetime.now(UTC) - timedelta(days=365)
    step = timedelta(days=365) / count
    seq, prev, public = 0, AuditHead.GENESIS, AuditHead.GENESIS
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
                encoded = encoding.encode_event(row)
                prev, public = encoding.keyed_hash(encoded), public_chain_value(public, encoded)
                events_copy.write_row([*row[:11], json.dumps(row[11]), row[12], prev, public])
                if seq == count:
                    break
    with connection.cursor() as cursor:
        cursor.execute("SET session_replication_role = DEFAULT")
        for _, definition in indexes:
            cursor.execute(definition)
        cursor.execute(
            "SELECT setval(pg_get_serial_sequence('approvals_call', 'id'), (SELECT max(id) FROM approvals_call))"
        )
    AuditHead.objects.update_or_create(pk=1, defaults={"seq": seq, "hash": prev, "public_hash": public})
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE approvals_auditevent")
        cursor.execute("VACUUM ANALYZE approvals_call")
    return seq
