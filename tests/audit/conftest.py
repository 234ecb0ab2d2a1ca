from contextlib import contextmanager

import pytest
from django.db import connection

from approvals.audit import chain as audit_chain
from approvals.audit.models import AuditEvent, AuditHead


@contextmanager
def trigger_disabled():
    """Tampering as someone with the tables' owner rights would: on PostgreSQL the audit triggers are off first."""
    postgres = connection.vendor == "postgresql"
    if postgres:
        with connection.cursor() as cursor:
            cursor.execute("SET session_replication_role = replica")
    try:
        yield
    finally:
        if postgres:
            with connection.cursor() as cursor:
                cursor.execute("SET session_replication_role = DEFAULT")


def cut_the_end(chain, keep):
    """What the tables' owner can do unseen by any link: delete the newest events and set the head back."""
    with trigger_disabled():
        AuditEvent.objects.filter(seq__gt=keep).delete()
        AuditHead.objects.update(seq=keep, hash=chain[keep - 1].hash, public_hash=chain[keep - 1].public_hash)


def append(count, action="server.changed", **fields):
    return [audit_chain.record(action, audit_chain.SYSTEM, data={"n": n}, **fields) for n in range(count)]


@pytest.fixture
def chain(db):
    """Ten events: each test starts with an empty log."""
    return append(10)
