"""Reads that the calls written together in one transaction make once for all of them.

Within the block of `shared`, `once(key, load)` loads each key once in this thread: the policy
rules, the webhook endpoints, a token's locked row. The batch is one transaction holding the
locks those reads take, so what they found stays true for every call of it.
"""

import threading
from collections.abc import Callable
from contextlib import contextmanager

from approvals.db import kept

_batch = threading.local()


@contextmanager
def shared():
    kept.refresh()
    _batch.reads = {}
    try:
        yield
    finally:
        del _batch.reads


def once(key, load: Callable):
    """`load()`, or what it gave for `key` earlier in this thread's batch."""
    reads = getattr(_batch, "reads", None)
    if reads is None:
        return load()
    if key not in reads:
        reads[key] = load()
    return reads[key]


def once_kept(key, load: Callable):
    """once(), and within a batch kept in the process until what `load` reads changes (db.kept)."""
    in_batch = getattr(_batch, "reads", None) is not None
    return once(key, lambda: kept.load("batch", key, load, kept=in_batch))


def forget():
    """A call of the batch rolled back to its savepoint, and with it the locks its reads took."""
    reads = getattr(_batch, "reads", None)
    if reads is not None:
        reads.clear()
