"""Fixtures of the tests of calls."""

import threading
from collections import Counter

import pytest
from asgiref.sync import SyncToAsync
from django.db.backends.base.base import BaseDatabaseWrapper


@pytest.fixture
def open_connections(monkeypatch):
    """Database connections opened and not closed since, by the name of the thread keeping them, other than the
    test's own threads."""
    opened = Counter()
    connect, close = BaseDatabaseWrapper.connect, BaseDatabaseWrapper.close

    def here():
        return threading.get_ident(), threading.current_thread().name

    def counting_connect(self):
        connect(self)
        opened[here()] += 1

    def counting_close(self):
        was_open = self.connection is not None
        close(self)
        if was_open and self.connection is None:
            opened[here()] -= 1

    monkeypatch.setattr(BaseDatabaseWrapper, "connect", counting_connect)
    monkeypatch.setattr(BaseDatabaseWrapper, "close", counting_close)
    # The test's own queries: sync ones in its thread, async ones in the thread Django's async ORM runs them in.
    tests = {threading.get_ident(), SyncToAsync.single_thread_executor.submit(threading.get_ident).result()}
    return lambda: [name for (thread, name), count in opened.items() if thread not in tests for _ in range(count)]
