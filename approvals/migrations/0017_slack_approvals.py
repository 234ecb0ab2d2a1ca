"""Slack approvals: a rule's and a server's channel, the links of Slack users to people, the messages posted.

SQLite alters approvals_policyrule and approvals_server by copying each into a new table, which loses the
kept-lookups triggers of 0009_kept_lookups: they are made again after, and again when this migration is undone.
"""

from importlib import import_module

import django.core.validators
import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models


def altered_tables_triggers(apps, schema_editor):
    if schema_editor.connection.vendor != "sqlite":
        return
    kept_lookups = import_module("approvals.migrations.0009_kept_lookups")
    for statement in kept_lookups.sqlite_triggers():
        if " ON approvals_server " in statement or " ON approvals_policyrule " in statement:
            schema_editor.execute(statement.replace("CREATE TRIGGER", "CREATE TRIGGER IF NOT EXISTS"), params=None)


class Migration(migrations.Migration):
    dependencies = [
        ("approvals", "0016_call_tasks"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RunPython(migrations.RunPython.noop, altered_tables_triggers),
        migrations.AddField(
            model_name="policyrule",
            name="slack_channel",
            field=models.CharField(
                blank=True,
                help_text="Where Slack approvals post the calls it holds; blank: the server's channel.",
                max_length=81,
                validators=[
                    django.core.validators.RegexValidator(
                        "^#?[A-Za-z0-9][A-Za-z0-9._-]{0,79}$",
                        "Name a Slack channel (#approvals) or give its id (C0123ABCD).",
                    )
                ],
            ),
        ),
        migrations.AddField(
            model_name="server",
            name="slack_channel",
            field=models.CharField(
                blank=True,
                help_text="Where Slack approvals post its held calls, unless their rule names one.",
                max_length=81,
                validators=[
                    django.core.validators.RegexValidator(
                        "^#?[A-Za-z0-9][A-Za-z0-9._-]{0,79}$",
                        "Name a Slack channel (#approvals) or give its id (C0123ABCD).",
                    )
                ],
            ),
        ),
        migrations.CreateModel(
            name="SlackMessage",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("channel", models.CharField(max_length=81)),
                ("ts", models.CharField(blank=True, max_length=32)),
                ("binding", models.CharField(blank=True, max_length=64)),
                ("error", models.TextField(blank=True)),
                ("attempts", models.PositiveSmallIntegerField(default=0)),
                ("tried_at", models.DateTimeField(blank=True, null=True)),
                ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
                ("updated_at", models.DateTimeField(blank=True, null=True)),
                (
                    "call",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE, related_name="slack_message", to="approvals.call"
                    ),
                ),
            ],
        ),
        migrations.CreateModel(
            name="SlackLink",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("team_id", models.CharField(max_length=32)),
                ("slack_user_id", models.CharField(max_length=32)),
                ("slack_name", models.CharField(blank=True, max_length=150)),
                (
                    "how",
                    models.CharField(
                        choices=[
                            ("account", "Confirmed on the person's account page"),
                            ("email", "Matched by a confirmed email"),
                        ],
                        max_length=10,
                    ),
                ),
                ("linked_at", models.DateTimeField(default=django.utils.timezone.now)),
                (
                    "user",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="slack_links",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "ordering": ["linked_at", "id"],
                "constraints": [models.UniqueConstraint(fields=("team_id", "slack_user_id"), name="slack_link_once")],
            },
        ),
        migrations.RunPython(altered_tables_triggers, migrations.RunPython.noop),
    ]
