"""The console as an OAuth client of upstream servers: a server's OAuth settings, its client registration, its
grants (shared or per person) and the authorizations under way.

SQLite alters approvals_server by copying it into a new table, which loses the kept-lookups triggers of
0009_kept_lookups: they are made again after, and again when this migration is undone.
"""

from importlib import import_module

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models

import approvals.db.sealed


def server_triggers(apps, schema_editor):
    if schema_editor.connection.vendor != "sqlite":
        return
    kept_lookups = import_module("approvals.migrations.0009_kept_lookups")
    for statement in kept_lookups.sqlite_triggers():
        if " ON approvals_server " in statement:
            schema_editor.execute(statement.replace("CREATE TRIGGER", "CREATE TRIGGER IF NOT EXISTS"), params=None)


class Migration(migrations.Migration):
    dependencies = [
        ("approvals", "0011_input_routing_covers_sampling"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RunPython(migrations.RunPython.noop, server_triggers),
        migrations.AddField(
            model_name="server",
            name="connection",
            field=models.CharField(
                choices=[
                    ("shared", "One connection, made by an admin, for every caller"),
                    ("per_person", "Each caller connects their own account"),
                ],
                default="shared",
                max_length=10,
            ),
        ),
        migrations.AddField(
            model_name="server",
            name="oauth",
            field=models.CharField(
                blank=True,
                choices=[
                    ("", "No OAuth (static headers, if any)"),
                    ("authorization_code", "OAuth with a person's consent (Connect)"),
                    ("client_credentials", "OAuth client credentials (machine to machine)"),
                ],
                default="",
                max_length=20,
            ),
        ),
        migrations.AddField(
            model_name="server",
            name="resource_indicator",
            field=models.BooleanField(default=True),
        ),
        migrations.AlterField(
            model_name="server",
            name="health",
            field=models.CharField(
                choices=[
                    ("unknown", "Unknown"),
                    ("ok", "Healthy"),
                    ("error", "Failing"),
                    ("needs_authorization", "Needs authorization"),
                ],
                default="unknown",
                max_length=20,
            ),
        ),
        migrations.CreateModel(
            name="UpstreamAuthorization",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("state_digest", models.CharField(max_length=64, unique=True)),
                ("code_verifier", approvals.db.sealed.SealedField()),
                ("redirect_uri", models.CharField(max_length=2000)),
                ("scope", models.CharField(blank=True, max_length=1000)),
                ("resource", models.CharField(blank=True, max_length=2000)),
                ("issuer", models.CharField(blank=True, max_length=2000)),
                ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
                ("expires_at", models.DateTimeField()),
                ("finished_at", models.DateTimeField(blank=True, null=True)),
                ("outcome", models.TextField(blank=True)),
                (
                    "server",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="oauth_authorizations",
                        to="approvals.server",
                    ),
                ),
                (
                    "started_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "user",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
        ),
        migrations.CreateModel(
            name="UpstreamClient",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "registration",
                    models.CharField(
                        blank=True,
                        choices=[
                            ("", "Not registered yet"),
                            ("cimd", "Client ID Metadata Document"),
                            ("dcr", "Dynamic client registration"),
                            ("preregistered", "Credentials an admin entered"),
                        ],
                        max_length=20,
                    ),
                ),
                ("client_id", models.CharField(blank=True, max_length=2000)),
                ("client_secret", approvals.db.sealed.SealedField(blank=True, null=True)),
                ("private_key", approvals.db.sealed.SealedField(blank=True, null=True)),
                (
                    "token_auth_method",
                    models.CharField(
                        blank=True,
                        choices=[
                            ("client_secret_basic", "Basic"),
                            ("client_secret_post", "Post"),
                            ("none", "None"),
                            ("private_key_jwt", "Private Key Jwt"),
                        ],
                        max_length=30,
                    ),
                ),
                ("signing_algorithm", models.CharField(blank=True, max_length=10)),
                ("redirect_uri", models.CharField(blank=True, max_length=2000)),
                ("issuer", models.CharField(blank=True, max_length=2000)),
                ("authorization_endpoint", models.CharField(blank=True, max_length=2000)),
                ("token_endpoint", models.CharField(blank=True, max_length=2000)),
                ("registration_endpoint", models.CharField(blank=True, max_length=2000)),
                ("resource", models.CharField(blank=True, max_length=2000)),
                ("resource_metadata_url", models.CharField(blank=True, max_length=2000)),
                ("scopes_supported", models.JSONField(blank=True, default=list)),
                ("metadata", models.JSONField(blank=True, default=dict)),
                ("discovered_at", models.DateTimeField(blank=True, null=True)),
                ("scope", models.CharField(blank=True, max_length=1000)),
                (
                    "server",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE, related_name="oauth_client", to="approvals.server"
                    ),
                ),
            ],
        ),
        migrations.CreateModel(
            name="UpstreamGrant",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("access_token", approvals.db.sealed.SealedField(blank=True, null=True)),
                ("refresh_token", approvals.db.sealed.SealedField(blank=True, null=True)),
                ("expires_at", models.DateTimeField(blank=True, null=True)),
                ("scope", models.CharField(blank=True, max_length=1000)),
                ("wanted_scope", models.CharField(blank=True, max_length=1000)),
                (
                    "status",
                    models.CharField(
                        choices=[("connected", "Connected"), ("needs_authorization", "Needs authorization")],
                        default="needs_authorization",
                        max_length=20,
                    ),
                ),
                ("reason", models.TextField(blank=True)),
                ("step_ups", models.PositiveSmallIntegerField(default=0)),
                ("connected_at", models.DateTimeField(blank=True, null=True)),
                ("refreshed_at", models.DateTimeField(blank=True, null=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                (
                    "server",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="oauth_grants", to="approvals.server"
                    ),
                ),
                (
                    "user",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="upstream_grants",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(
                        condition=models.Q(("user__isnull", True)), fields=("server",), name="upstream_grant_one_shared"
                    ),
                    models.UniqueConstraint(
                        condition=models.Q(("user__isnull", False)),
                        fields=("server", "user"),
                        name="upstream_grant_one_per_user",
                    ),
                ],
            },
        ),
        migrations.RunPython(server_triggers, migrations.RunPython.noop),
    ]
