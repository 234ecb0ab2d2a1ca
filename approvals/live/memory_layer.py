"""The embedded channel layer: channels' in-memory layer, tidied at most once a second.

The stock layer walks every group and channel for expired messages and memberships at every
send and receive. Each held call waits in a group of its own, so with thousands held that walk
came at every call's news and grew with every call recorded. Messages expire after a minute;
dropping one a second late changes nothing.

A group's news is put on its members' queues at once: the stock layer makes a task per member, and
asyncio.as_completed's queue and callbacks even for a group nobody is in (a call's own group, most
of the time: only a wait for its decision listens there).

group_send_many sends many such in turn: live.events sends through it whichever the layer (on Redis, redis_layer's
publishes them in one round trip).
"""

import asyncio
import time
from copy import deepcopy

from channels.layers import InMemoryChannelLayer

TIDY_EVERY_SECONDS = 1.0


class TidiedInMemoryChannelLayer(InMemoryChannelLayer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.tidied_at = float("-inf")

    def _clean_expired(self):
        now = time.monotonic()
        if now - self.tidied_at >= TIDY_EVERY_SECONDS:
            self.tidied_at = now
            super()._clean_expired()

    async def group_send(self, group, message):
        assert isinstance(message, dict), "Message is not a dict"
        self.require_valid_group_name(group)
        self._clean_expired()
        for channel in list(self.groups.get(group, ())):
            queue = self.channels.get(channel)
            if queue is None:
                queue = self.channels[channel] = asyncio.Queue(maxsize=self.get_capacity(channel))
            # A full channel misses the message, as the stock layer's ChannelFull, which it drops, says.
            if not queue.full():
                queue.put_nowait((time.time() + self.expiry, deepcopy(message)))

    async def group_send_many(self, sends):
        """Each (group, message) in turn; one failing keeps none of the others from being sent, the first failure
        raised once all were tried."""
        failure = None
        for group, message in sends:
            try:
                await self.group_send(group, message)
            except Exception as exc:
                failure = failure or exc
        if failure is not None:
            raise failure
