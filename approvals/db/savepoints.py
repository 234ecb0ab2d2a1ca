"""A transaction whose nested atomic blocks open no savepoints."""

from contextlib import contextmanager

from django.db import DEFAULT_DB_ALIAS, connections


def _no_savepoint():
    return None


@contextmanager
def left_out():
    """Within an atomic block: the atomic blocks nested in this one open no savepoint, and any of them failing
    marks the whole transaction for rollback.

    For a transaction holding one piece of work, whose failure rolls it all back anyway: the savepoint
    and its release would be two more statements, each a trip to the database. Django's atomic blocks take a
    savepoint of None as a database's without savepoints (they mark the transaction instead of rolling back to
    it); the `savepoint` feature alone would not do, since SQLite's backend ignores it inside an atomic block.
    """
    database = connections[DEFAULT_DB_ALIAS]
    database.savepoint = _no_savepoint
    try:
        yield
    finally:
        del database.savepoint
