"""A new row's insert and a row's conditional update, their SQL written once per shape.

Django's ORM builds the SQL of an INSERT or UPDATE anew at every save, walking the model's
fields, quoting names and compiling lookups, which costs more than the database's running
it; every call through the gateway is inserted and then updated. Here the statement is
built once per model and set of columns and kept; each write only prepares its values, by
the fields' own get_db_prep_save as the ORM does. A write whose values the ORM would have
to resolve (an expression, a database default), or of a model with save signals connected,
goes through the ORM as before.
"""

import functools

from django.db import connection
from django.db.models import CharField, TextField, signals

# Fields whose get_db_prep_save gives back a str, or None, as it is (through to_python and get_prep_value): most of a
# call's and an audit event's columns, prepared per write.
AS_THEY_ARE = (CharField, TextField)


def insert(obj) -> None:
    """Insert `obj`, a new instance, as obj.save(force_insert=True) would: its primary key set from the database."""
    model = type(obj)
    # As save() does: a related object saved after it was assigned gives its key now, an unsaved one is refused.
    obj._prepare_related_fields_for_save(operation_name="save")
    fields = _inserted_fields(model)
    values = [field.pre_save(obj, True) for field in fields]
    if _resolved_by_orm(values) or _has_save_signals(model):
        obj.save(force_insert=True)
        return
    with connection.cursor() as cursor:
        prepared = prepared_values(fields, values, cursor.db)
        sql, returning = _insert_sql(model)
        cursor.execute(sql, prepared)
        meta = model._meta
        pk = cursor.fetchone()[0] if returning else cursor.db.ops.last_insert_id(cursor, meta.db_table, meta.pk.column)
    obj.pk = meta.pk.to_python(pk)
    obj._state.adding, obj._state.db = False, connection.alias


def update_if_status(model, pk, sources, changes: dict) -> bool:
    """Set `changes` on row `pk` if its status is one of `sources`: whether it was."""
    fields = [model._meta.get_field(name) for name in changes]
    values = [
        value.prepare_database_save(field) if field.remote_field and hasattr(value, "prepare_database_save") else value
        for field, value in zip(fields, changes.values(), strict=True)
    ]
    if _resolved_by_orm(values):
        return bool(model.objects.filter(pk=pk, status__in=sources).update(**changes))
    sources = list(sources)
    with connection.cursor() as cursor:
        prepared = prepared_values(fields, values, cursor.db)
        sql = _update_sql(model, tuple(field.column for field in fields), len(sources))
        cursor.execute(sql, [*prepared, pk, *sources])
        return cursor.rowcount > 0


def prepared_values(fields, values, database) -> list:
    """`values` as the database takes them, each by its field's get_db_prep_save, as the ORM prepares them."""
    return [
        value
        if (value is None or type(value) is str) and type(field) in AS_THEY_ARE
        else field.get_db_prep_save(value, database)
        for field, value in zip(fields, values, strict=True)
    ]


def _resolved_by_orm(values) -> bool:
    return any(hasattr(value, "resolve_expression") for value in values)


def _has_save_signals(model) -> bool:
    return signals.pre_save.has_listeners(model) or signals.post_save.has_listeners(model)


@functools.cache
def _inserted_fields(model) -> list:
    return [field for field in model._meta.concrete_fields if not field.primary_key]


@functools.cache
def _insert_sql(model) -> tuple[str, bool]:
    quote, meta = connection.ops.quote_name, model._meta
    fields = _inserted_fields(model)
    columns = ", ".join(quote(field.column) for field in fields)
    placeholders = ", ".join(["%s"] * len(fields))
    sql = f"INSERT INTO {quote(meta.db_table)} ({columns}) VALUES ({placeholders})"
    returning = connection.features.can_return_columns_from_insert
    return (f"{sql} RETURNING {quote(meta.pk.column)}" if returning else sql), returning


@functools.cache
def _update_sql(model, columns: tuple[str, ...], sources: int) -> str:
    quote, meta = connection.ops.quote_name, model._meta
    assignments = ", ".join(f"{quote(column)} = %s" for column in columns)
    status = quote(meta.get_field("status").column)
    return (
        f"UPDATE {quote(meta.db_table)} SET {assignments} "
        f"WHERE {quote(meta.pk.column)} = %s AND {status} IN ({', '.join(['%s'] * sources)})"
    )
