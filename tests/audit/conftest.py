from contextlib import contextmanager

import pytest
from django.contrib.auth.models import Group
from django.db import connection

from approvals import roles
from approvals.audit import chain as audit_chain
from approvals.models import AuditEvent, AuditHead

PASSWORD = "a long enough audit test password"


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
        AuditHead.objects.update(seq=keep, hash=chain[keep - 1].hash)


def append(count, action="server.changed", **fields):
    return [audit_chain.record(action, audit_chain.SYSTEM, data={"n": n}, **fields) for n in range(count)]


@pytest.fixture
def chain(db):
    """Ten events: each test starts with an empty log."""
    return append(10)


@pytest.fixture
def user_with(django_user_model, db):
    def make(*role_names, username=None):
        roles.ensure_roles()
        user = django_user_model.objects.create_user(
            username=username or "-".join(role_names) or "nobody", password=PASSWORD
        )
        user.groups.set(Group.objects.filter(name__in=role_names))
        return user

    return make


@pytest.fixture
def signed_in(client, user_with):
    def sign_in(*role_names, username=None):
        client.force_login(user_with(*role_names, username=username))
        return client

    return sign_in
