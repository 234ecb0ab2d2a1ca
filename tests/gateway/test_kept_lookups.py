"""What a request looks up (its token, session and tool; its batch's rules) is kept in the process only until the
rows it comes from change, however they change: the ORM, a plain UPDATE, another process."""

import asyncio
import threading

import pytest
from asgiref.sync import async_to_sync
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from approvals.actions.revocation import revoke_token
from approvals.calls import lifecycle
from approvals.catalog.models import Server
from approvals.db import batch_reads, kept
from approvals.gateway import sessions
from approvals.gateway.auth import admitted_and_counted
from approvals.policy.models import PolicyRule
from approvals.tokens.credentials import create_token, hash_secret
from approvals.webhooks.models import WebhookEndpoint
from tests.fixtures.catalog import make_server, make_tool
from tests.fixtures.servers import free_port

pytestmark = pytest.mark.django_db


def stamp() -> str | None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT stamp FROM approvals_lookupstamp WHERE id = 1")
        row = cursor.fetchone()
    return row[0] if row else None


def admitted(secret):
    return admitted_and_counted(secret, "http://127.0.0.1/mcp", "127.0.0.1", hash_secret(secret))[0]


def test_it_keeps_to_the_stamp_its_own_request_read_when_another_thread_keeps_an_older_one():
    token, secret = create_token("agent")
    # The first admission notes the token's use, a change of its own; the second keeps it under the stamp after.
    assert admitted(secret).token == token and admitted(secret).token == token
    before = stamp()
    assert kept.peek("secret", hash_secret(secret))[0] == token
    revoke_token(token)
    kept.refresh()
    assert stamp() != before
    # A batch's thread that read the stamp before the revocation keeps it only now, after this request's read.
    late = threading.Thread(target=kept.keep_stamp, args=((before,),))
    late.start()
    late.join()
    assert kept.peek("secret", hash_secret(secret)) is None


def test_it_reads_a_kept_token_with_one_query_for_the_stamp():
    token, secret = create_token("agent")
    # The first admission notes when the token was used: a change of its row like any other.
    assert admitted(secret).token == token
    assert admitted(secret).token == token
    with CaptureQueriesContext(connection) as queries:
        assert admitted(secret).token == token
    assert len(queries) == 1, [query["sql"] for query in queries]
    assert "approvals_lookupstamp" in queries[0]["sql"]


def test_it_refuses_a_kept_token_at_the_first_request_after_its_revocation():
    token, secret = create_token("agent")
    assert admitted(secret).token == token
    revoke_token(token)
    admission = admitted(secret)
    assert admission.token is None
    assert "was revoked" in admission.refusal


def test_it_refuses_a_kept_token_revoked_by_a_plain_update():
    token, secret = create_token("agent")
    assert admitted(secret).token == token
    with connection.cursor() as cursor:
        cursor.execute("UPDATE approvals_clienttoken SET revoked_at = %s WHERE id = %s", [timezone.now(), token.pk])
    assert admitted(secret).token is None


def test_it_forgets_a_kept_tool_once_its_server_is_disabled():
    token, _ = create_token("agent")
    tool = make_tool(make_server(), "lookup")
    kept.refresh()
    assert lifecycle.find_tool(token, tool.exposed_name, kept=True) == tool
    assert lifecycle.kept_tool(token, tool.exposed_name) == tool
    Server.objects.filter(pk=tool.server_id).update(enabled=False)
    kept.refresh()
    assert lifecycle.kept_tool(token, tool.exposed_name) is None
    assert lifecycle.find_tool(token, tool.exposed_name, kept=True) is None


def test_it_keeps_no_tool_from_a_token_whose_globs_leave_it_out():
    tool = make_tool(make_server(), "lookup")
    kept.refresh()
    assert lifecycle.find_tool(create_token("agent")[0], tool.exposed_name, kept=True) == tool
    assert lifecycle.kept_tool(create_token("narrow", tool_globs=["other_*"])[0], tool.exposed_name) is None


def test_it_forgets_a_kept_session_once_the_client_ends_it():
    token, _ = create_token("agent")
    session = sessions.open_session(token, "2025-11-25", {}, {})
    kept.refresh()
    assert sessions.find_open_session(token, session.pk, kept=True) == session
    assert sessions.kept_session(token, session.pk) == session
    sessions.close_session(session)
    kept.refresh()
    assert sessions.kept_session(token, session.pk) is None
    assert sessions.find_open_session(token, session.pk, kept=True) is None


def test_it_gives_a_batch_the_rules_as_they_are_now():
    server = make_server()
    with batch_reads.shared():
        assert lifecycle.enabled_rules() == []
    rule = PolicyRule.objects.create(name="allow reads", action="allow", tool_glob="*", server=server, position=1)
    with batch_reads.shared():
        assert lifecycle.enabled_rules() == [rule]
    PolicyRule.objects.filter(pk=rule.pk).update(enabled=False)
    with batch_reads.shared():
        assert lifecycle.enabled_rules() == []


def test_it_changes_the_stamp_with_every_kind_of_change_to_each_table_it_watches():
    before = stamp()
    token, _ = create_token("agent")
    after_insert = stamp()
    token.description = "changed"
    token.save()
    after_update = stamp()
    endpoint = WebhookEndpoint.objects.create(url="https://hooks.example/", console_url="https://c.example/")
    after_endpoint = stamp()
    endpoint.delete()
    after_delete = stamp()
    assert len({before, after_insert, after_update, after_endpoint, after_delete}) == 5


@pytest.mark.django_db(transaction=True)
@pytest.mark.postgres
def test_it_closes_the_loops_connection_with_the_loop():
    async def read():
        assert await kept.refresh_on_the_loop()
        reads = kept.loop_stamp_reads()
        return asyncio.get_running_loop(), reads.connection

    loop, reader = async_to_sync(read)()

    assert reader.closed
    assert loop not in kept._loop_reads


@pytest.mark.django_db(transaction=True)
@pytest.mark.postgres
def test_it_leaves_the_stamp_to_a_thread_when_the_loop_cannot_reach_postgresql(monkeypatch):
    database = connection.settings_dict
    monkeypatch.setitem(database, "PORT", free_port())

    assert async_to_sync(kept.refresh_on_the_loop)() is False


class Reads(kept.LoopStampReads):
    """Reads whose rows come from the test: each waits for its turn and answers how many reads were sent before it."""

    def __init__(self):
        super().__init__()
        self.sent = 0
        self.turns: list[asyncio.Event] = []

    async def read_now(self):
        self.sent += 1
        turn = asyncio.Event()
        self.turns.append(turn)
        await turn.wait()
        return (f"read {self.sent}",)


async def sent(reads: Reads, count: int):
    while reads.sent < count:
        await asyncio.sleep(0)


def test_it_answers_whoever_asks_during_a_read_with_the_next_read():
    async def asking():
        reads = Reads()
        first = asyncio.create_task(reads.read())
        await sent(reads, 1)
        # Asked after the first read was sent: it may have missed a change committed meanwhile.
        second, third = asyncio.create_task(reads.read()), asyncio.create_task(reads.read())
        await asyncio.sleep(0)
        reads.turns[0].set()
        assert await first == ("read 1",)
        await sent(reads, 2)
        reads.turns[1].set()
        return await second, await third, reads.sent

    assert async_to_sync(asking)() == (("read 2",), ("read 2",), 2)
