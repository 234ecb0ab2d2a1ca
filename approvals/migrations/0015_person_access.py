"""Browser sessions kept under a hash of their key, with the person they name; and the kept lookups' stamp told of
changes to people, their groups and the groups' names, on which a client token's owner's standing depends.

The sessions Django kept before, each under its plain key in django_session, are deleted: everyone signs in again.
"""

from django.db import migrations, models

WATCHED = ("auth_user", "auth_user_groups", "auth_group")
UPSERT = (
    "INSERT INTO approvals_lookupstamp (id, stamp) VALUES (1, lower(hex(randomblob(16)))) "
    "ON CONFLICT (id) DO UPDATE SET stamp = excluded.stamp"
)


def triggers(vendor: str) -> list[str]:
    # The function migration 0009 made; SQLite has row triggers only, one event each.
    if vendor == "postgresql":
        return [
            f"CREATE TRIGGER approvals_lookups_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON {table} "
            "FOR EACH STATEMENT EXECUTE FUNCTION approvals_lookups_changed()"
            for table in WATCHED
        ]
    return [
        f"CREATE TRIGGER approvals_lookups_{table}_{event.lower()} AFTER {event} ON {table} BEGIN {UPSERT}; END"
        for table in WATCHED
        for event in ("INSERT", "UPDATE", "DELETE")
    ]


def dropped(vendor: str) -> list[str]:
    if vendor == "postgresql":
        return [f"DROP TRIGGER IF EXISTS approvals_lookups_changed ON {table}" for table in WATCHED]
    return [
        f"DROP TRIGGER IF EXISTS approvals_lookups_{table}_{event}"
        for table in WATCHED
        for event in ("insert", "update", "delete")
    ]


def create_triggers(apps, schema_editor):
    for statement in triggers(schema_editor.connection.vendor):
        schema_editor.execute(statement, params=None)


def drop_triggers(apps, schema_editor):
    for statement in dropped(schema_editor.connection.vendor):
        schema_editor.execute(statement, params=None)


def end_plain_sessions(apps, schema_editor):
    if "django_session" in schema_editor.connection.introspection.table_names():
        schema_editor.execute("DELETE FROM django_session", params=None)


class Migration(migrations.Migration):
    dependencies = [
        ("approvals", "0014_oauth_role_scopes"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [
        migrations.CreateModel(
            name="BrowserSession",
            fields=[
                ("session_data", models.TextField(verbose_name="session data")),
                ("expire_date", models.DateTimeField(db_index=True, verbose_name="expire date")),
                ("session_key", models.CharField(max_length=64, primary_key=True, serialize=False)),
                ("user_id", models.IntegerField(blank=True, db_index=True, null=True)),
            ],
            options={
                "verbose_name": "session",
                "verbose_name_plural": "sessions",
                "abstract": False,
            },
        ),
        migrations.RunPython(create_triggers, drop_triggers),
        migrations.RunPython(end_plain_sessions, migrations.RunPython.noop),
    ]
