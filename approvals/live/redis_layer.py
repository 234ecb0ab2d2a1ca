"""The channel layer on Redis: channels_redis's pub/sub layer, which also publishes many messages in one round trip.

Every change of a call announces it to two groups (its own and the operators'), and a batch of writes commits
several calls at once. channels_redis publishes each message alone: a round trip and redis-py's whole command
path apiece, one after another behind its shard's lock, on every call's path. group_send_many puts what an event
loop's outbox (live.events) took in one go into one pipeline per shard, under that shard's lock, serialized and
named as group_send would: any process's subscribers receive exactly what they would, in the order given.
"""

from channels_redis.pubsub import RedisPubSubChannelLayer


class PipelinedRedisPubSubChannelLayer(RedisPubSubChannelLayer):
    async def group_send_many(self, sends):
        """Each (group, message), as group_send would send it, those of one shard in one round trip. One shard
        failing keeps none of the others from being sent; the first failure is raised once all were tried."""
        layer, by_shard = self._get_layer(), {}
        for group, message in sends:
            channel = layer._get_group_channel_name(group)
            by_shard.setdefault(layer._get_shard(channel), []).append((channel, self.serialize(message)))
        failure = None
        for shard, publishes in by_shard.items():
            try:
                async with shard._lock:
                    shard._ensure_redis()
                    async with shard._redis.pipeline(transaction=False) as pipe:
                        for channel, data in publishes:
                            pipe.publish(channel, data)
                        await pipe.execute()
            except Exception as exc:
                failure = failure or exc
        if failure is not None:
            raise failure
