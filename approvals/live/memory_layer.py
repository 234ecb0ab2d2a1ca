"""The embedded channel layer: channels' in-memory layer, tidied at most once a second.

The stock layer walks every group and channel for expired messages and memberships at every
send and receive. Each held call waits in a group of its own, so with thousands held that walk
came at every call's news and grew with every call recorded. Messages expire after a minute;
dropping one a second late changes nothing.
"""

import time

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
