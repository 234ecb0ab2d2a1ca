"""The consumers' database thread keeps a working connection between events and drops a failed one."""

import pytest
from django.db import connection

from approvals.calls.models import Call
from approvals.db.consumer_db import db_sync_to_async

pytestmark = pytest.mark.django_db(transaction=True)


def connection_in_use():
    Call.objects.exists()
    return connection.connection


async def test_it_keeps_a_working_connection_between_events():
    first = await db_sync_to_async(connection_in_use)()
    second = await db_sync_to_async(connection_in_use)()
    assert first is not None and second is first


async def test_it_closes_a_connection_that_failed():
    def failing():
        used = connection_in_use()
        # As when the database server went away under it.
        connection.errors_occurred = True
        connection.is_usable = lambda: False
        return used

    def reconnected():
        del connection.is_usable
        return connection_in_use()

    broken = await db_sync_to_async(failing)()
    assert await db_sync_to_async(reconnected)() is not broken
