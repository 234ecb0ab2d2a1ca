"""Reading many rows at flat memory."""

import psycopg
from django.db import connection


def stream_rows(rows, chunk_size=5000):
    """The tuples of a values_list queryset, streamed at flat memory.

    On PostgreSQL straight from psycopg, in binary and in chunks of one round trip:
    the server sends rows while this process works on the ones before, where a
    server-side cursor would wait for each batch, and Django's row converters would
    cost as much as the work itself. A plain psycopg cursor, because Django's binds
    parameters client-side, which cannot stream binary rows. Elsewhere Django's
    chunked iterator. Close the generator when done with it, even half-way: a stream
    left open holds the connection.
    """
    if connection.vendor != "postgresql":
        yield from rows.iterator(chunk_size=chunk_size)
        return
    sql, params = rows.query.sql_with_params()
    connection.ensure_connection()
    with psycopg.Cursor(connection.connection) as cursor:
        yield from cursor.stream(sql, params, binary=True, size=chunk_size)
