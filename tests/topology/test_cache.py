"""The shared cache: each web request runs in a context of its own, and must not open a Redis connection of its own."""

import threading

import pytest
import redis
from django.conf import settings
from django.core.cache import caches

pytestmark = pytest.mark.redis


def connections_received(client) -> int:
    return client.info("stats")["total_connections_received"]


def test_it_sends_every_context_s_cache_commands_over_one_process_wide_pool():
    client = redis.Redis.from_url(settings.REDIS_URL)
    caches["default"].add("warm-up", 1, timeout=5)
    before = connections_received(client)
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
    after = connections_received(client)
    client.close()
    assert len({id(cache) for cache in seen}) > 1
    assert after - before <= 1
