"""A new row's insert and a row's conditional update, their SQL written once per shape.

Django's ORM builds the SQL of an INSERT or UPDATE anew at every save, walking the model's
fields, quoting names and compiling lookups, which costs more than the database's running
it; every call through the gateway is inserted and then updated. Here the statement is
built once per model and set of columns and kept; each write only prepares its values as the
fields' own get_db_prep_save does, calling the backend's adapter for the common columns itself.
A write whose values the ORM would have to resolve (an expression, a database default), or of
a model with save signals connected, goes through the ORM as before.
"""

import functools
from datetime import datetime

from django.db.models import (
    AutoField,
    BigAutoField,
    BigIntegerField,
    BooleanField,
    CharField,
    DateTimeField,
    ForeignKey,
    IntegerField,
    JSONField,
    PositiveBigIntegerField,
    PositiveIntegerField,
    PositiveSmallIntegerField,
    SmallIntegerField,
    TextField,
    signals,
)

from approvals import driver


def insert(obj) -> None:
    """Insert `obj`, a new instance, as obj.save(force_insert=True) would: its primary key set from the database."""
    model = type(obj)
    # As save() does: a related object saved after it was assigned gives its key now, an unsaved one is refused.
    obj._prepare_related_fields_for_save(operation_name="save")
    fields, preparers = _inserted_fields(model)
    values = [field.pre_save(obj, True) for field in fields]
    if _resolved_by_orm(values) or _has_save_signals(model):
        obj.save(force_insert=True)
        return
    database = driver.database()
    sql, returning = _insert_sql(model)
    prepared = prepared_values(fields, preparers, values, database)
    meta = model._meta
    if returning:
        pk = driver.fetch_one(sql, prepared)[0]
    else:
        with database.cursor() as cursor:
            cursor.execute(sql, prepared)
            pk = database.ops.last_insert_id(cursor, meta.db_table, meta.pk.column)
    obj.pk = meta.pk.to_python(pk)
    obj._state.adding, obj._state.db = False, database.alias


def update_if_status(model, pk, sources, changes: dict) -> bool:
    """Set `changes` on row `pk` if its status is one of `sources`: whether it was."""
    fields, preparers = _updated_fields(model, tuple(changes))
    values = [
        value.prepare_database_save(field) if field.remote_field and hasattr(value, "prepare_database_save") else value
        for field, value in zip(fields, changes.values(), strict=True)
    ]
    if _resolved_by_orm(values):
        return bool(model.objects.filter(pk=pk, status__in=sources).update(**changes))
    sources = list(sources)
    prepared = prepared_values(fields, preparers, values, driver.database())
    sql = _update_sql(model, tuple(field.column for field in fields), len(sources))
    return driver.execute(sql, [*prepared, pk, *sources]) > 0


def prepared_values(fields, preparers, values, database) -> list:
    """`values` as the database takes them: as each field's get_db_prep_save prepares them, which for a plain value
    of a common column (text, a number, a flag, an aware time, JSON, a key) is one call of the backend's adapter or
    none; for anything else it is called itself. `preparers` are the fields' own (_preparer)."""
    operations = database.ops
    return [prepare(operations, field, value) for prepare, field, value in zip(preparers, fields, values, strict=True)]


def _by_the_field(operations, field, value):
    return field.get_db_prep_save(value, operations.connection)


def _text(operations, field, value):
    return value if value is None or type(value) is str else _by_the_field(operations, field, value)


def _integer(operations, field, value):
    if value is None or type(value) is int:
        return operations.adapt_integerfield_value(value, field.get_internal_type())
    return _by_the_field(operations, field, value)


def _key(operations, field, value):
    # A key to an automatic primary key: checked as one, not adapted as an integer (AutoFieldMixin).
    if value is None or type(value) is int:
        return operations.validate_autopk_value(value)
    return _by_the_field(operations, field, value)


def _flag(operations, field, value):
    return value if value is None or type(value) is bool else _by_the_field(operations, field, value)


def _moment(operations, field, value):
    if value is None:
        return None
    # A naive time the field would warn of, and interpret: left to it.
    if type(value) is datetime and value.tzinfo is not None:
        return driver.moment(operations, value)
    return _by_the_field(operations, field, value)


def _json(operations, field, value):
    if value is None:
        # SQL NULL, as the field stores None.
        return None
    if type(value) in _JSON_TYPES:
        return operations.adapt_json_value(value, field.encoder)
    return _by_the_field(operations, field, value)


_JSON_TYPES = {dict, list, str, int, float, bool}
_PREPARERS = {
    CharField: _text,
    TextField: _text,
    BooleanField: _flag,
    DateTimeField: _moment,
    JSONField: _json,
    **dict.fromkeys(
        [
            IntegerField,
            BigIntegerField,
            SmallIntegerField,
            PositiveIntegerField,
            PositiveSmallIntegerField,
            PositiveBigIntegerField,
        ],
        _integer,
    ),
}


@functools.cache
def _preparer(field):
    """How `field`'s values are prepared: by the exact class of the field, a subclass may prepare otherwise."""
    if type(field) is ForeignKey and type(field.target_field) in (AutoField, BigAutoField):
        return _key
    return _PREPARERS.get(type(field), _by_the_field)


def _resolved_by_orm(values) -> bool:
    return any(hasattr(value, "resolve_expression") for value in values)


def _has_save_signals(model) -> bool:
    return signals.pre_save.has_listeners(model) or signals.post_save.has_listeners(model)


@functools.cache
def _inserted_fields(model) -> tuple[list, list]:
    """The fields an insert writes, and their preparers."""
    fields = [field for field in model._meta.concrete_fields if not field.primary_key]
    return fields, [_preparer(field) for field in fields]


@functools.cache
def _updated_fields(model, names: tuple[str, ...]) -> tuple[list, list]:
    """The fields of these names, and their preparers: kept by name, whose hash costs less than a field's."""
    fields = [model._meta.get_field(name) for name in names]
    return fields, [_preparer(field) for field in fields]


@functools.cache
def _insert_sql(model) -> tuple[str, bool]:
    database = driver.database()
    quote, meta = database.ops.quote_name, model._meta
    fields, _ = _inserted_fields(model)
    columns = ", ".join(quote(field.column) for field in fields)
    placeholders = ", ".join(["%s"] * len(fields))
    sql = f"INSERT INTO {quote(meta.db_table)} ({columns}) VALUES ({placeholders})"
    returning = database.features.can_return_columns_from_insert
    return (f"{sql} RETURNING {quote(meta.pk.column)}" if returning else sql), returning


@functools.cache
def _update_sql(model, columns: tuple[str, ...], sources: int) -> str:
    quote, meta = driver.database().ops.quote_name, model._meta
    assignments = ", ".join(f"{quote(column)} = %s" for column in columns)
    status = quote(meta.get_field("status").column)
    return (
        f"UPDATE {quote(meta.db_table)} SET {assignments} "
        f"WHERE {quote(meta.pk.column)} = %s AND {status} IN ({', '.join(['%s'] * sources)})"
    )
