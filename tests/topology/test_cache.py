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
        # A thread, like each daphne request, gets a cache object of its own.
        cache = caches["default"]
        seen.append(cache)
        cache.add(f"test-shared-cache-{number}", number, timeout=5)

    for number in range(20):
        worker = threading.Thread(target=one_request, args=(number,))
        worker.start()
        worker.join()
    assert len({id(cache) for cache in seen}) > 1
    assert len(opened) <= 1
