"""The stamp that tells each process its kept lookups are out of date (approvals.db.kept).

A trigger on each table those lookups read writes a new random stamp into the one row of
approvals_lookupstamp, in the transaction of the change, whoever makes it.

Django alters most SQLite columns by copying the table into a new one and dropping the old, triggers and all:
a later migration that alters a watched table there must create that table's triggers again
(tests/gateway/test_kept_lookups.py fails until it does).
"""

from django.db import migrations, models

WATCHED = (
    "approvals_clienttoken",
    "approvals_retiredsecret",
    "approvals_mcpsession",
    "approvals_server",
    "approvals_tool",
    "approvals_policyrule",
    "approvals_webhookendpoint",
)
NEW_STAMP = {"postgresql": "md5(random()::text || clock_timestamp()::text)", "sqlite": "lower(hex(randomblob(16)))"}
UPSERT = (
    "INSERT INTO approvals_lookupstamp (id, stamp) VALUES (1, {stamp}) "
    "ON CONFLICT (id) DO UPDATE SET stamp = excluded.stamp"
)


def postgresql_triggers() -> list[str]:
    function = f"""
        CREATE OR REPLACE FUNCTION approvals_lookups_changed() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            {UPSERT.format(stamp=NEW_STAMP["postgresql"])};
            RETURN NULL;
        END $$
    """
    return [function] + [
        f"CREATE TRIGGER approvals_lookups_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON {table} "
        "FOR EACH STATEMENT EXECUTE FUNCTION approvals_lookups_changed()"
        for table in WATCHED
    ]


def sqlite_triggers() -> list[str]:
    # SQLite has row triggers only, one event each.
    return [
        f"CREATE TRIGGER approvals_lookups_{table}_{event.lower()} AFTER {event} ON {table} "
        f"BEGIN {UPSERT.format(stamp=NEW_STAMP['sqlite'])}; END"
        for table in WATCHED
        for event in ("INSERT", "UPDATE", "DELETE")
    ]


def create_triggers(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    statements = {"postgresql": postgresql_triggers, "sqlite": sqlite_triggers}[vendor]()
    for statement in statements:
        schema_editor.execute(statement, params=None)


def drop_triggers(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        statements = [f"DROP TRIGGER IF EXISTS approvals_lookups_changed ON {table}" for table in WATCHED]
        statements.append("DROP FUNCTION IF EXISTS approvals_lookups_changed()")
    else:
        statements = [
            f"DROP TRIGGER IF EXISTS approvals_lookups_{table}_{event}"
            for table in WATCHED
            for event in ("insert", "update", "delete")
        ]
    for statement in statements:
        schema_editor.execute(statement, params=None)


class Migration(migrations.Migration):
    dependencies = [
        ("approvals", "0008_sealed_credentials"),
    ]

    operations = [
        migrations.CreateModel(
            name="LookupStamp",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("stamp", models.CharField(max_length=32)),
            ],
        ),
        migrations.RunPython(create_triggers, drop_triggers),
    ]
