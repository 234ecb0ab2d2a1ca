"""Servers' headers and environment and webhooks' secrets are stored encrypted under CREDENTIALS_KEY."""

import json

from django.db import migrations

import approvals.db.sealed
from approvals.db.sealed import seal, unseal

# (model, column, whether its plain value is JSON text): columns are read and written raw, since the field
# reading them would insist on ciphertext.
COLUMNS = [("server", "headers", True), ("server", "env", True), ("webhookendpoint", "secret", False)]


def rewrite(apps, schema_editor, change):
    quote = schema_editor.connection.ops.quote_name
    with schema_editor.connection.cursor() as cursor:
        for model_name, column, is_json in COLUMNS:
            table = quote(apps.get_model("approvals", model_name)._meta.db_table)
            cursor.execute(f"SELECT id, {quote(column)} FROM {table}")
            for pk, value in cursor.fetchall():
                cursor.execute(
                    f"UPDATE {table} SET {quote(column)} = %s WHERE id = %s",
                    [change(value, is_json), pk],
                )


def encrypt(apps, schema_editor):
    rewrite(apps, schema_editor, lambda value, is_json: seal(json.loads(value) if is_json else value))


def decrypt(apps, schema_editor):
    rewrite(apps, schema_editor, lambda value, is_json: json.dumps(unseal(value)) if is_json else unseal(value))


class Migration(migrations.Migration):
    dependencies = [
        ("approvals", "0007_oauth"),
    ]

    operations = [
        migrations.AlterField(
            model_name="server",
            name="env",
            field=approvals.db.sealed.SealedField(blank=True, default=dict),
        ),
        migrations.AlterField(
            model_name="server",
            name="headers",
            field=approvals.db.sealed.SealedField(blank=True, default=dict),
        ),
        migrations.AlterField(
            model_name="webhookendpoint",
            name="secret",
            field=approvals.db.sealed.SealedField(),
        ),
        migrations.RunPython(encrypt, decrypt),
    ]
