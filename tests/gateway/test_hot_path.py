"""What one allowed tools/call costs the console's database: the queries of the whole request, in every thread,
through Django's cursor or the driver's (approvals.driver)."""

import threading

import httpx
import pytest
from asgiref.sync import sync_to_async
from django.core import signals
from django.db import connection
from django.db.backends import utils

from approvals import driver
from approvals.policy.models import PolicyRule
from tests.fixtures.catalog import add_synced_server
from tests.fixtures.gateway import LEGACY
from tests.fixtures.waiting import wait_until

# The request reads the kept lookups' stamp; then two transactions of the loop's batch of writes, the arrival (the
# stamp for the batch's rules and endpoints, the call's insert, its events' append) and the result (the call's update,
# its event's append), each append three statements (read the head, insert, move the head) or on PostgreSQL two (the
# head moves within the insert's statement). A batch of one work opens no savepoint. SQLite's explicit BEGIN is a
# statement of its own; PostgreSQL's is implicit.
MOST_QUERIES = {"sqlite": 13, "postgresql": 9}


class EveryQuery:
    """The SQL every thread of this process runs: the console under test (tests.fixtures.live) runs in it."""

    def __init__(self):
        self.sql: list[str] = []
        self.lock = threading.Lock()

    def note(self, execute, sql, params, many, context):
        self.add(sql)
        return execute(sql, params, many, context)

    def add(self, sql: str):
        with self.lock:
            self.sql.append(sql)


def the_calls_own(sql: list[str]) -> list[str]:
    """The statements but SQLite's transactions that write no call: the console the module shares may still run a
    batch of an earlier test's work (a lease to renew), which reads the stamp and finds nothing left to write."""
    if connection.vendor != "sqlite":
        return sql
    transactions, outside = [], []
    for statement in sql:
        if statement.startswith("BEGIN"):
            transactions.append([statement])
        else:
            (transactions[-1] if transactions else outside).append(statement)
    calls = [t for t in transactions if any('"approvals_call"' in statement for statement in t)]
    return outside + [statement for transaction in calls for statement in transaction]


@pytest.fixture
def every_query(monkeypatch) -> EveryQuery:
    counted = EveryQuery()
    execute = utils.CursorWrapper._execute_with_wrappers

    def noted(self, sql, params, many, executor):
        return execute(self, sql, params, many, lambda *args: counted.note(executor, *args))

    monkeypatch.setattr(utils.CursorWrapper, "_execute_with_wrappers", noted)
    run = driver._run

    def run_noted(sql, params, *last):
        # What the driver leaves to Django's cursor is noted there.
        cursor = run(sql, params, *last)
        if cursor is not None:
            counted.add(sql)
        return cursor

    monkeypatch.setattr(driver, "_run", run_noted)
    return counted


def echo(http: httpx.Client, url: str, headers: dict, n: int) -> str:
    params = {"name": "sdk_echo", "arguments": {"message": f"call {n}"}}
    answer = http.post(url, json={"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": params}, headers=headers)
    return answer.json()["result"]["content"][0]["text"]


async def test_it_runs_an_allowed_call_in_two_writes_and_few_queries(mcp_url, secret, sdk_server, every_query):
    finished = []

    def on_finished(**kwargs):
        finished.append(threading.current_thread().name)

    signals.request_finished.connect(on_finished)
    await sync_to_async(add_synced_server)("sdk", transport="http", url=sdk_server.url)
    await PolicyRule.objects.acreate(name="echo", action="allow", tool_glob="sdk_echo")
    headers = {"Authorization": f"Bearer {secret}", "Accept": "application/json", "Content-Type": "application/json"}

    def second_call() -> str:
        with httpx.Client(timeout=30) as http:
            info = {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}
            initialize = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": info}
            session_id = http.post(mcp_url, json=initialize, headers=headers).headers["Mcp-Session-Id"]
            headers.update({"Mcp-Session-Id": session_id, "MCP-Protocol-Version": LEGACY})
            # The first call fills what the process keeps (db.kept) and opens the upstream session.
            assert echo(http, mcp_url, headers, 1) == "call 1"
            # The initialize ran work in a thread of its own, which Django's request_finished closes.
            wait_until(lambda: finished, message="the initialize's request_finished")
            finished.clear()
            every_query.sql.clear()
            return echo(http, mcp_url, headers, 2)

    try:
        assert await sync_to_async(second_call, thread_sensitive=False)() == "call 2"
    finally:
        signals.request_finished.disconnect(on_finished)
    # No thread of the request's own, so none to close: the call's only hops are to the loop's shared threads.
    assert finished == []
    queries = the_calls_own(every_query.sql)
    appends = [sql for sql in queries if 'INSERT INTO "approvals_auditevent"' in sql]
    assert len(appends) == 2, queries
    assert len(queries) <= MOST_QUERIES[connection.vendor], queries
