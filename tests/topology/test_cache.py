"""The shared cache: each web request runs in a context of its own, and must not open a Redis connection of its own."""

import threading

import pytest
import redis
from django.core.cache import caches

pytestmark = pytest.mark.redis


def test_it_sends_every_context_s_cache_commands_over_one_process_wide_pool(monkeypatch):
    caches["default"].add("warm-up", 1, timeout=5)
    # Sockets this process opens, counted here: the server's own count takes in every other client of it.
    opened = []
    connect = redis.connection.Connection._connect
    monkeypatch.setattr(redis.connection.Connection, "_connect", lambda self: opened.append(self) or connect(self))
    seen = []

    def one_request(number):
        # A thread, like each request of a web process, gets a cache object of its own.
        cache = caches["default"]
        seen.append(cache)
        cache.add(f"test-shared-cache-{number}", number, timeout=5)

    for number in range(20):
        worker = threading.Thread(target=one_request, args=(number,))
        worker.start()
        worker.join()
    assert len({id(cache) for cache in seen}) > 1
    assert len(opened) <= 1


def test_it_increments_a_counter_in_one_round_trip_keeping_its_expiry(monkeypatch):
    cache = caches["rate_limits"]
    key = "test-incr-one-trip"
    cache.delete(key)
    cache.add(key, 1, timeout=60)
    # The first use on a server loads the script there.
    assert cache.incr(key) == 2
    sent = []
    send = redis.connection.Connection.send_packed_command

    def noting(self, *args, **kwargs):
        sent.append(args)
        return send(self, *args, **kwargs)

    monkeypatch.setattr(redis.connection.Connection, "send_packed_command", noting)
    assert cache.incr(key) == 3
    assert len(sent) == 1
    client = cache._cache.get_client(write=True)
    assert 0 < client.ttl(cache.make_key(key)) <= 60


def test_it_neither_counts_nor_makes_a_counter_that_is_gone():
    cache = caches["rate_limits"]
    key = "test-incr-gone"
    cache.delete(key)
    with pytest.raises(ValueError, match="not found"):
        cache.incr(key)
    assert cache.get(key) is None
