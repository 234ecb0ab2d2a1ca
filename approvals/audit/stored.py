"""An append's statements: the events' rows inserted and the head moved, written out once per shape.

Written out, each row's values adapted here, rather than through the ORM, whose model instances and preparing
of every field cost more than the database's running them; an audited step lies on the path of every call
several times. On PostgreSQL the insert moves the head in the same statement, one round trip rather than two.
"""

import functools

from approvals import driver
from approvals.audit.encoding import HASHED
from approvals.audit.models import AuditEvent, AuditHead

# The columns an append writes, in the order of stored_row's values.
_STORED = [AuditEvent._meta.get_field(name) for name in (*HASHED, "hash", "public_hash")]


def store(database, rows: list[tuple], tip: list, last: bool):
    """Insert `rows` (stored_row's) and move the head to `tip` (its seq, hash and public hash); `last`: nothing of
    the transaction follows (driver.execute)."""
    if database.vendor == "postgresql":
        driver.execute(*_insert(database, rows, tip), last)
    else:
        driver.execute(*_insert(database, rows, tip))
        driver.execute(_move_head_sql(), tip, last)


def stored_row(event, operations) -> tuple:
    """The event's values (an audit.chain.Event) as the database driver takes them, each adapted by the backend
    as its field would prepare it (the integers, the time, `data`), the strings as they are."""
    integer = operations.adapt_integerfield_value
    return (
        integer(event.seq, "BigIntegerField"),
        driver.moment(operations, event.at),
        event.actor_type,
        integer(event.actor_id, "BigIntegerField"),
        event.actor_name,
        event.action,
        event.request_id,
        integer(event.call_id, "BigIntegerField"),
        integer(event.server_id, "BigIntegerField"),
        integer(event.tool_id, "BigIntegerField"),
        integer(event.token_id, "BigIntegerField"),
        operations.adapt_json_value(event.data, None),
        event.prev_hash,
        event.hash,
        event.public_hash,
    )


def table(model) -> str:
    return driver.database().ops.quote_name(model._meta.db_table)


@functools.cache
def _move_head_sql() -> str:
    return f"UPDATE {table(AuditHead)} SET seq = %s, hash = %s, public_hash = %s WHERE id = 1"


# psycopg keeps the parsed form of a statement of at most this many parameters (psycopg._queries); one of more it
# parses in Python afresh each time.
MOST_PARSED_ONCE = 50


def _insert(database, rows: list[tuple], tip: list) -> tuple[str, list]:
    """The insert of `rows` and its parameters; on PostgreSQL the head moves to `tip` in the same statement
    (elsewhere `store` moves it).

    On PostgreSQL a batch of calls may append hundreds of events: past MOST_PARSED_ONCE parameters
    each column goes as one array. A few events go as plain rows, which the server plans faster.
    """
    postgresql = database.vendor == "postgresql"
    if postgresql and len(tip) + len(rows) * len(_STORED) > MOST_PARSED_ONCE:
        return _insert_sql(database.vendor, 0), [*tip, *(list(column) for column in zip(*rows, strict=True))]
    values = [value for values in rows for value in values]
    return _insert_sql(database.vendor, len(rows)), [*tip, *values] if postgresql else values


@functools.lru_cache(maxsize=256)
def _insert_sql(vendor: str, rows: int) -> str:
    """The insert's statement, the same for every batch of as many rows (0: on PostgreSQL, of arrays)."""
    database = driver.database()
    columns = ", ".join(database.ops.quote_name(field.column) for field in _STORED)
    if rows:
        row = "(" + ", ".join(["%s"] * len(_STORED)) + ")"
        source = f"VALUES {', '.join([row] * rows)}"
    else:
        source = "SELECT * FROM unnest(" + ", ".join(f"%s::{field.db_type(database)}[]" for field in _STORED) + ")"
    insert = f"INSERT INTO {table(AuditEvent)} ({columns}) {source}"
    if vendor == "postgresql":
        return f"WITH moved AS ({_move_head_sql()}) {insert}"
    return insert
