"""A client token identified on the event loop: the stamp of the kept lookups read there, the rate counted there
beside it, and the request left to a thread, counted once, whenever the loop cannot admit it (db.kept)."""

import asyncio

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from django.core.cache import caches
from django.db import connection
from django.utils import timezone

from approvals.actions.revocation import revoke_token
from approvals.db import kept
from approvals.gateway import auth
from approvals.gateway.auth import admitted_and_counted
from approvals.tokens.credentials import create_token, hash_secret

pytestmark = pytest.mark.django_db


def admitted(secret):
    return admitted_and_counted(secret, "http://127.0.0.1/mcp", "127.0.0.1", hash_secret(secret))[0]


@pytest.fixture
def kept_on_the_loop(monkeypatch):
    """One minute of the token's rate counted afresh, in memory or on Redis; the stamp read from the loop by a
    connection of its own, which sees only what was committed (hence the tests' transaction=True)."""
    monkeypatch.setattr(auth.time, "time", lambda: 1_800_000_000.0)


def on_the_loop(secret):
    return async_to_sync(auth.admitted_on_the_loop)(secret, hash_secret(secret))


@pytest.mark.django_db(transaction=True)
def test_it_admits_and_counts_a_kept_token_on_the_loop(kept_on_the_loop):
    token, secret = create_token("agent")
    auth.forget_requests(hash_secret(secret))
    # Kept once its use is noted: noting it changes its row.
    assert admitted(secret).token == token
    assert admitted(secret).token == token

    admission, count = on_the_loop(secret)

    assert admission.token == token
    assert count == 3
    assert admitted_and_counted(secret, "", "", hash_secret(secret))[1] == 4


@pytest.mark.django_db(transaction=True)
def test_it_leaves_a_kept_token_to_a_thread_once_its_row_changed(kept_on_the_loop):
    token, secret = create_token("agent")
    admitted(secret), admitted(secret)
    with connection.cursor() as cursor:
        cursor.execute("UPDATE approvals_clienttoken SET revoked_at = %s WHERE id = %s", [timezone.now(), token.pk])

    assert on_the_loop(secret)[0] is None
    assert "was revoked" in admitted(secret).refusal


@pytest.mark.django_db(transaction=True)
def test_it_leaves_an_unknown_secret_and_an_unread_stamp_to_a_thread_counted_once(kept_on_the_loop, monkeypatch):
    _, secret = create_token("agent")
    credential = hash_secret(secret)
    auth.forget_requests(credential)
    admitted(secret), admitted(secret)
    unknown = "mcpc_" + "0" * 40
    auth.forget_requests(hash_secret(unknown))
    assert on_the_loop(unknown) == (None, 1)

    async def unread():
        return False

    monkeypatch.setattr(kept, "refresh_on_the_loop", unread)

    assert on_the_loop(secret) == (None, 3)
    # The thread admits it with the loop's count, and counts nothing more.
    admission, count = admitted_and_counted(secret, "", "", credential, 3)
    assert admission.token is not None and count == 3
    assert admitted_and_counted(secret, "", "", credential)[1] == 4


@pytest.mark.django_db(transaction=True)
def test_it_counts_the_request_while_the_stamp_is_read(kept_on_the_loop, monkeypatch):
    token, secret = create_token("agent")
    credential = hash_secret(secret)
    auth.forget_requests(credential)
    admitted(secret), admitted(secret)
    read, counted_during_the_read = kept.refresh_on_the_loop, []

    async def slow_read():
        await asyncio.sleep(0.2)
        counted_during_the_read.append(caches["rate_limits"].get(auth.rate_key(credential)))
        return await read()

    monkeypatch.setattr(kept, "refresh_on_the_loop", slow_read)

    admission, count = on_the_loop(secret)

    assert admission.token == token and count == 3
    assert counted_during_the_read == [3]


@pytest.mark.django_db(transaction=True)
@pytest.mark.postgres
def test_it_refuses_on_the_loop_a_token_revoked_by_another_connection_at_once(kept_on_the_loop):
    token, secret = create_token("agent")
    admitted(secret), admitted(secret)

    async def before_and_after_the_revocation():
        before = await auth.admitted_on_the_loop(secret, hash_secret(secret))
        # Django's connection, in a thread: to the loop's own connection, another process's.
        await sync_to_async(revoke_token)(token)
        return before, await auth.admitted_on_the_loop(secret, hash_secret(secret))

    before, after = async_to_sync(before_and_after_the_revocation)()

    assert before[0].token == token
    assert after[0] is None
    assert "was revoked" in admitted(secret).refusal


@pytest.mark.redis
def test_it_counts_on_the_loop_and_in_a_thread_alike_in_one_window_that_expires(kept_on_the_loop):
    credential = hash_secret("mcpc_" + "1" * 40)
    auth.forget_requests(credential)

    counts = [auth.count_request(credential), async_to_sync(auth.count_request_on_the_loop)(credential)]
    counts.append(auth.count_request(credential))

    assert counts == [1, 2, 3]
    cache = caches["rate_limits"]
    ttl = cache._cache.get_client(write=True).ttl(cache.make_and_validate_key(auth.rate_key(credential)))
    assert 0 < ttl <= auth.WINDOW_EXPIRY_SECONDS
    auth.forget_requests(credential)
    assert async_to_sync(auth.count_request_on_the_loop)(credential) == 1
