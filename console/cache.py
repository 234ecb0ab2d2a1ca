"""Django's Redis cache with one client, and so one connection pool, per process.

Django keeps a cache object per async context, and each object's Redis client
makes its own connection pool. In a web process every request runs in a context of its
own, so every request opened a new connection to Redis for the one or two commands
it sends (the rate limit's count, a session read), and redis-py's handshake costs
several times a command on an open connection. Django also builds
a new redis.Redis for every command, which costs more CPU than the command itself
(it copies some two hundred response callbacks); one per pool does. redis-py's
clients and pools are safe to share between threads and start afresh in a forked child.

Django's incr asks whether the key exists, then increments it: two round trips, and a key
that expires between them comes back from INCR without an expiry. Here the two run as one
script on the server, as one step.

A count can also be awaited on an event loop (acount), through a client of the loop's own:
Django's aincr is a get and then a set, each in a thread, and loses counts when processes race.
"""

import asyncio
import contextvars
import threading

import redis.asyncio
from django.core.cache.backends.redis import RedisCache, RedisCacheClient

_clients: dict[tuple, "SharedRedisCacheClient"] = {}
_clients_lock = threading.Lock()

INCR_EXISTING = """
if redis.call('EXISTS', KEYS[1]) == 1 then
    return redis.call('INCRBY', KEYS[1], ARGV[1])
end
return false
"""

# A fixed window's count: the key made to expire with its first count, in the same step.
COUNT_IN_WINDOW = """
local count = redis.call('INCR', KEYS[1])
if count == 1 then
    redis.call('EXPIRE', KEYS[1], ARGV[1])
end
return count
"""


class SharedRedisCacheClient(RedisCacheClient):
    def __init__(self, servers, **options):
        super().__init__(servers, **options)
        self._redis_by_pool = {}
        self._incr_existing = None
        self._by_loop = {}

    def get_client(self, key=None, *, write=False):
        pool = self._get_connection_pool(write)
        if pool not in self._redis_by_pool:
            self._redis_by_pool[pool] = self._client(connection_pool=pool)
        return self._redis_by_pool[pool]

    def incr(self, key, delta):
        client = self.get_client(key, write=True)
        if self._incr_existing is None:
            self._incr_existing = client.register_script(INCR_EXISTING)
        count = self._incr_existing(keys=[key], args=[delta], client=client)
        if count is None:
            # As Django's own: the caller starts the count with add().
            raise ValueError(f"Key '{key}' not found.")
        return count

    async def acount(self, key, timeout: int) -> int:
        loop = asyncio.get_running_loop()
        if loop not in self._by_loop:
            options = {name: value for name, value in self._pool_options.items() if name != "parser_class"}
            client = redis.asyncio.Redis.from_url(self._servers[0], **options)
            # The task kept here too: a loop holds its tasks only weakly.
            closing = loop.create_task(self.closed_with_the_loop(loop, client), context=contextvars.Context())
            self._by_loop[loop] = client.register_script(COUNT_IN_WINDOW), closing
        counting, _ = self._by_loop[loop]
        return await counting(keys=[key], args=[timeout])

    async def closed_with_the_loop(self, loop: asyncio.AbstractEventLoop, client: redis.asyncio.Redis):
        """Keeps the loop's client until the loop's tasks are cancelled at its end (asyncio.run), then closes it."""
        try:
            await loop.create_future()
        finally:
            self._by_loop.pop(loop, None)
            # Not when the task is merely collected, its loop stopped: nothing would run the close.
            if loop.is_running():
                await client.aclose()


def shared_client(servers, **options) -> SharedRedisCacheClient:
    key = (tuple(servers), repr(sorted(options.items())))
    with _clients_lock:
        if key not in _clients:
            _clients[key] = SharedRedisCacheClient(servers, **options)
        return _clients[key]


class SharedRedisCache(RedisCache):
    def __init__(self, server, params):
        super().__init__(server, params)
        self._class = shared_client

    async def acount(self, key, timeout: int, version=None) -> int:
        """The count under `key` one up, as one step on the server, the key expiring `timeout` seconds after its
        first count; awaited on the running event loop, with no thread."""
        return await self._cache.acount(self.make_and_validate_key(key, version=version), timeout)
