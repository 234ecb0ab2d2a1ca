"""The console's tables, the audit chain's head row, and on PostgreSQL an append-only audit log.

On PostgreSQL a trigger refuses UPDATE and DELETE on the events table. It lets a
DELETE through only when the transaction has set approvals.audit_prune to 'on',
which approvals.audit.retention.prune alone does. A trigram index serves free-text
search; it covers exactly approvals.audit_log.query.search_expression().

The head may not be deleted, nor updated except forward: its seq only grows (and its hash
changes only with it), and so does its anchor, which pruning alone moves. Neither the
events nor the head may be truncated. The console's own role in the production recipe
cannot drop or disable a trigger.

The prune switch (approvals.audit_prune) is any session's to set, since pruning needs it;
three more triggers leave it only the old events:

- events are deleted only up to the head's anchor, which pruning moves first;
- the anchor moves only onto an existing event, with that hash, older than 23 hours (the
  shortest retention is a day; the hour spared covers clocks that disagree);
- an event is inserted only with a time at most an hour before the database's clock, so
  no event can be made old to serve as an anchor.

Whoever holds the console's login can so delete, with the switch, only events older than
23 hours, and verification still names an anchor no audit.pruned event attests. The
tables' owner can drop the triggers, which is what the HMAC links and the witness outside
the database are for (approvals.audit.witness).

SQLite gets none of this: an embedded console relies on verification alone.
"""

import uuid

import django.core.validators
import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models

APPEND_ONLY_AND_SEARCH = [
    """
    CREATE OR REPLACE FUNCTION approvals_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'DELETE' AND current_setting('approvals.audit_prune', true) = 'on' THEN
            RETURN NULL;
        END IF;
        RAISE EXCEPTION 'audit events are append-only: % refused', TG_OP
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'Events leave only by pruning (approvals.audit.retention.prune).';
    END $$
    """,
    """
    CREATE TRIGGER approvals_audit_append_only BEFORE UPDATE OR DELETE ON approvals_auditevent
        FOR EACH STATEMENT EXECUTE FUNCTION approvals_audit_append_only()
    """,
    "CREATE EXTENSION IF NOT EXISTS pg_trgm",
    "CREATE INDEX audit_arguments_trgm ON approvals_auditevent USING gin (upper(data ->> 'arguments') gin_trgm_ops)",
]

# Reversing leaves pg_trgm installed: other objects in the database may use it.
DROP_APPEND_ONLY_AND_SEARCH = [
    "DROP INDEX IF EXISTS audit_arguments_trgm",
    "DROP TRIGGER IF EXISTS approvals_audit_append_only ON approvals_auditevent",
    "DROP FUNCTION IF EXISTS approvals_audit_append_only()",
]

HEAD_GUARD = [
    """
    CREATE OR REPLACE FUNCTION approvals_audit_head_forward_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'DELETE' THEN
            RAISE EXCEPTION 'the audit chain head cannot be deleted'
                USING ERRCODE = 'insufficient_privilege';
        END IF;
        IF NEW.id <> OLD.id
           OR NEW.seq < OLD.seq OR (NEW.seq = OLD.seq AND NEW.hash <> OLD.hash)
           OR NEW.anchor_seq < OLD.anchor_seq
           OR (NEW.anchor_seq = OLD.anchor_seq AND NEW.anchor_hash <> OLD.anchor_hash) THEN
            RAISE EXCEPTION 'the audit chain head only moves forward: seq % to %, anchor % to %',
                OLD.seq, NEW.seq, OLD.anchor_seq, NEW.anchor_seq
                USING ERRCODE = 'insufficient_privilege';
        END IF;
        IF NEW.anchor_seq > OLD.anchor_seq AND NOT EXISTS (
            SELECT 1 FROM approvals_auditevent
            WHERE seq = NEW.anchor_seq AND hash = NEW.anchor_hash AND at < now() - interval '23 hours'
        ) THEN
            RAISE EXCEPTION 'the audit anchor moves only onto an event older than 23 hours (seq %)', NEW.anchor_seq
                USING ERRCODE = 'insufficient_privilege';
        END IF;
        RETURN NEW;
    END $$
    """,
    """
    CREATE TRIGGER approvals_audit_head_forward_only BEFORE UPDATE OR DELETE ON approvals_audithead
        FOR EACH ROW EXECUTE FUNCTION approvals_audit_head_forward_only()
    """,
    """
    CREATE OR REPLACE FUNCTION approvals_audit_no_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        RAISE EXCEPTION '% cannot be truncated: it is part of the audit log', TG_TABLE_NAME
            USING ERRCODE = 'insufficient_privilege';
    END $$
    """,
    """
    CREATE TRIGGER approvals_audit_no_truncate BEFORE TRUNCATE ON approvals_auditevent
        FOR EACH STATEMENT EXECUTE FUNCTION approvals_audit_no_truncate()
    """,
    """
    CREATE TRIGGER approvals_audit_no_truncate BEFORE TRUNCATE ON approvals_audithead
        FOR EACH STATEMENT EXECUTE FUNCTION approvals_audit_no_truncate()
    """,
]

DROP_HEAD_GUARD = [
    "DROP TRIGGER IF EXISTS approvals_audit_no_truncate ON approvals_audithead",
    "DROP TRIGGER IF EXISTS approvals_audit_no_truncate ON approvals_auditevent",
    "DROP FUNCTION IF EXISTS approvals_audit_no_truncate()",
    "DROP TRIGGER IF EXISTS approvals_audit_head_forward_only ON approvals_audithead",
    "DROP FUNCTION IF EXISTS approvals_audit_head_forward_only()",
]


def statement_guard(name: str, event: str, rows: str, refused_when: str, message: str) -> list[str]:
    """An AFTER `event` trigger refusing the statement when any of its `rows` (a transition table) matches."""
    return [
        f"""
        CREATE OR REPLACE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF EXISTS (SELECT 1 FROM {rows} WHERE {refused_when}) THEN
                RAISE EXCEPTION '{message}' USING ERRCODE = 'insufficient_privilege';
            END IF;
            RETURN NULL;
        END $$
        """,
        f"""
        CREATE TRIGGER {name} AFTER {event} ON approvals_auditevent
            REFERENCING {"OLD" if event == "DELETE" else "NEW"} TABLE AS {rows}
            FOR EACH STATEMENT EXECUTE FUNCTION {name}()
        """,
    ]


PRUNE_GUARDS = [
    *statement_guard(
        "approvals_audit_prune_to_anchor",
        "DELETE",
        "pruned",
        "seq > COALESCE((SELECT anchor_seq FROM approvals_audithead WHERE id = 1), 0)",
        "audit events are deleted only up to the anchor, which pruning moves first",
    ),
    *statement_guard(
        "approvals_audit_no_backdating",
        "INSERT",
        "added",
        "at < now() - interval '1 hour'",
        "audit events are written at the time they happen, not earlier",
    ),
]

DROP_PRUNE_GUARDS = [
    "DROP TRIGGER IF EXISTS approvals_audit_no_backdating ON approvals_auditevent",
    "DROP FUNCTION IF EXISTS approvals_audit_no_backdating()",
    "DROP TRIGGER IF EXISTS approvals_audit_prune_to_anchor ON approvals_auditevent",
    "DROP FUNCTION IF EXISTS approvals_audit_prune_to_anchor()",
]


def on_postgresql(statements):
    """A RunPython function running `statements` on PostgreSQL only: triggers SQLite has no equivalent for."""

    def execute(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            for statement in statements:
                schema_editor.execute(statement, params=None)

    return execute


def create_audit_head(apps, schema_editor):
    # Appending locks this one row to serialise writers.
    apps.get_model("approvals", "AuditHead").objects.create(pk=1)


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="AuditHead",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("seq", models.BigIntegerField(default=0)),
                (
                    "hash",
                    models.CharField(
                        default="0000000000000000000000000000000000000000000000000000000000000000", max_length=64
                    ),
                ),
                ("anchor_seq", models.BigIntegerField(default=0)),
                (
                    "anchor_hash",
                    models.CharField(
                        default="0000000000000000000000000000000000000000000000000000000000000000", max_length=64
                    ),
                ),
            ],
        ),
        migrations.CreateModel(
            name="AuditSettings",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "retention_days",
                    models.PositiveIntegerField(blank=True, help_text="0 keeps events forever.", null=True),
                ),
                ("updated_by_name", models.CharField(blank=True, max_length=150)),
                ("updated_at", models.DateTimeField(blank=True, null=True)),
            ],
        ),
        migrations.CreateModel(
            name="AuditVerification",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("started_at", models.DateTimeField(default=django.utils.timezone.now)),
                ("finished_at", models.DateTimeField(blank=True, null=True)),
                ("ok", models.BooleanField(default=False)),
                ("checked", models.BigIntegerField(default=0)),
                ("first_seq", models.BigIntegerField(blank=True, null=True)),
                ("last_seq", models.BigIntegerField(blank=True, null=True)),
                ("broken_seq", models.BigIntegerField(blank=True, null=True)),
                ("expected", models.TextField(blank=True)),
                ("found", models.TextField(blank=True)),
                ("problem", models.TextField(blank=True)),
                ("run_by", models.CharField(max_length=150)),
            ],
            options={
                "ordering": ["-started_at", "-id"],
            },
        ),
        migrations.CreateModel(
            name="Server",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("name", models.CharField(max_length=100, unique=True)),
                ("slug", models.SlugField(max_length=100, unique=True)),
                (
                    "transport",
                    models.CharField(
                        choices=[("http", "Streamable HTTP"), ("stdio", "stdio subprocess")], max_length=10
                    ),
                ),
                ("url", models.URLField(blank=True, max_length=2000)),
                (
                    "command",
                    models.TextField(blank=True, help_text="Program and arguments, as a shell would split them."),
                ),
                ("headers", models.JSONField(blank=True, default=dict)),
                ("env", models.JSONField(blank=True, default=dict)),
                (
                    "trusted",
                    models.BooleanField(
                        default=False,
                        help_text="Count this server's tool annotations in policy and show them as verified.",
                    ),
                ),
                ("enabled", models.BooleanField(default=True)),
                ("tool_prefix", models.CharField(blank=True, max_length=40)),
                (
                    "changes",
                    models.CharField(
                        choices=[
                            ("review", "An admin reviews each new or changed tool before clients see it"),
                            ("accept", "Accept new and changed tools at once (servers the organisation builds itself)"),
                        ],
                        default="review",
                        help_text="What happens when a tool of this server is added or its definition changes.",
                        max_length=10,
                    ),
                ),
                ("accept_next_listing", models.BooleanField(default=False)),
                (
                    "input_routing",
                    models.CharField(
                        choices=[
                            ("operator", "An operator answers in the console"),
                            (
                                "client_if_capable",
                                "The client answers when it declared the capability, else an operator",
                            ),
                        ],
                        default="operator",
                        help_text="Who answers what this server asks during a call (elicitation).",
                        max_length=20,
                    ),
                ),
                ("revision", models.CharField(blank=True, max_length=20)),
                ("server_info", models.JSONField(blank=True, default=dict)),
                ("capabilities", models.JSONField(blank=True, default=dict)),
                ("instructions", models.TextField(blank=True)),
                (
                    "health",
                    models.CharField(
                        choices=[("unknown", "Unknown"), ("ok", "Healthy"), ("error", "Failing")],
                        default="unknown",
                        max_length=10,
                    ),
                ),
                ("last_error", models.TextField(blank=True)),
                ("last_sync_at", models.DateTimeField(blank=True, null=True)),
                ("last_checked_at", models.DateTimeField(blank=True, null=True)),
                ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
                ("updated_at", models.DateTimeField(auto_now=True)),
            ],
            options={
                "ordering": ["name"],
            },
        ),
        migrations.CreateModel(
            name="WebhookDelivery",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("message_id", models.CharField(max_length=40, unique=True)),
                ("event_type", models.CharField(max_length=40)),
                ("payload", models.JSONField()),
                ("created_at", models.DateTimeField(db_index=True, default=django.utils.timezone.now)),
                ("attempts", models.PositiveIntegerField(default=0)),
                ("delivered_at", models.DateTimeField(blank=True, null=True)),
                ("next_attempt_at", models.DateTimeField(blank=True, db_index=True, null=True)),
            ],
            options={
                "ordering": ["-created_at", "-id"],
            },
        ),
        migrations.CreateModel(
            name="ApiKey",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("name", models.CharField(max_length=100)),
                ("prefix", models.CharField(help_text="The key's first characters, to recognise it.", max_length=16)),
                ("key_hash", models.CharField(max_length=64, unique=True)),
                ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
                ("last_used_at", models.DateTimeField(blank=True, null=True)),
                ("revoked_at", models.DateTimeField(blank=True, null=True)),
                (
                    "user",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="api_keys",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "ordering": ["-created_at", "-id"],
            },
        ),
        migrations.CreateModel(
            name="AuditEvent",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("seq", models.BigIntegerField(unique=True)),
                ("at", models.DateTimeField(db_index=True, default=django.utils.timezone.now)),
                ("actor_type", models.CharField(max_length=10)),
                ("actor_id", models.BigIntegerField(blank=True, null=True)),
                ("actor_name", models.CharField(max_length=150)),
                ("action", models.CharField(max_length=40)),
                ("request_id", models.CharField(blank=True, db_index=True, max_length=36)),
                ("call_id", models.BigIntegerField(blank=True, null=True)),
                ("server_id", models.BigIntegerField(blank=True, null=True)),
                ("tool_id", models.BigIntegerField(blank=True, null=True)),
                ("token_id", models.BigIntegerField(blank=True, null=True)),
                ("data", models.JSONField(default=dict)),
                ("prev_hash", models.CharField(max_length=64)),
                ("hash", models.CharField(max_length=64)),
            ],
            options={
                "ordering": ["seq"],
                "permissions": [("export_audit", "Export and verify the audit log")],
                "indexes": [
                    models.Index(fields=["action", "seq"], name="audit_action_seq"),
                    models.Index(fields=["token_id", "seq"], name="audit_token_seq"),
                    models.Index(fields=["server_id", "seq"], name="audit_server_seq"),
                    models.Index(fields=["tool_id", "seq"], name="audit_tool_seq"),
                    models.Index(fields=["actor_type", "actor_id", "seq"], name="audit_actor_seq"),
                    models.Index(fields=["call_id", "seq"], name="audit_call_seq"),
                    models.Index(fields=["token_id", "action", "seq"], name="audit_token_action_seq"),
                    models.Index(fields=["server_id", "action", "seq"], name="audit_server_action_seq"),
                    models.Index(fields=["tool_id", "action", "seq"], name="audit_tool_action_seq"),
                    models.Index(fields=["actor_type", "actor_id", "action", "seq"], name="audit_actor_action_seq"),
                ],
            },
        ),
        migrations.CreateModel(
            name="ClientToken",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("name", models.CharField(max_length=100, unique=True)),
                (
                    "prefix",
                    models.CharField(
                        blank=True, help_text="The token's first characters, to recognise it.", max_length=16
                    ),
                ),
                ("token_hash", models.CharField(blank=True, max_length=64, null=True, unique=True)),
                (
                    "tool_globs",
                    models.JSONField(
                        blank=True, default=list, help_text='Exposed tool names this token may use; ["*"] for all.'
                    ),
                ),
                ("description", models.CharField(blank=True, max_length=500)),
                ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
                (
                    "expires_at",
                    models.DateTimeField(
                        blank=True, help_text="From then on the gateway refuses the token.", null=True
                    ),
                ),
                (
                    "rate_per_minute",
                    models.PositiveIntegerField(
                        blank=True, help_text="Requests a minute; blank takes MCP_RATE_LIMIT_PER_MINUTE.", null=True
                    ),
                ),
                (
                    "max_pending_calls",
                    models.PositiveIntegerField(
                        blank=True,
                        help_text="Calls awaiting a decision at once; 0 for no cap, blank takes the global cap.",
                        null=True,
                    ),
                ),
                ("last_used_at", models.DateTimeField(blank=True, null=True)),
                (
                    "last_used_from",
                    models.CharField(blank=True, help_text="The client's address as last seen.", max_length=100),
                ),
                ("rotated_at", models.DateTimeField(blank=True, null=True)),
                ("revoked_at", models.DateTimeField(blank=True, null=True)),
                (
                    "created_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "owner",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="client_tokens",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "ordering": ["name"],
                "permissions": [("manage_tokens", "Create, change, rotate and revoke client tokens")],
            },
        ),
        migrations.CreateModel(
            name="McpSession",
            fields=[
                ("id", models.CharField(max_length=64, primary_key=True, serialize=False)),
                ("protocol_version", models.CharField(max_length=20)),
                ("client_info", models.JSONField(blank=True, default=dict)),
                ("client_capabilities", models.JSONField(blank=True, default=dict)),
                ("initialized", models.BooleanField(default=False)),
                (
                    "log_level",
                    models.CharField(
                        blank=True,
                        help_text="Set by logging/setLevel; log messages below it are not relayed.",
                        max_length=10,
                    ),
                ),
                (
                    "resource_subscriptions",
                    models.JSONField(
                        blank=True,
                        default=list,
                        help_text="The resource URIs the client subscribed to (resources/subscribe).",
                    ),
                ),
                ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
                ("last_seen_at", models.DateTimeField(default=django.utils.timezone.now)),
                ("closed_at", models.DateTimeField(blank=True, null=True)),
                (
                    "token",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="sessions", to="approvals.clienttoken"
                    ),
                ),
            ],
        ),
        migrations.CreateModel(
            name="PolicyRule",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("uid", models.UUIDField(default=uuid.uuid4, editable=False, unique=True)),
                ("position", models.PositiveIntegerField(db_index=True, default=0)),
                ("name", models.CharField(blank=True, max_length=100)),
                (
                    "action",
                    models.CharField(
                        choices=[("allow", "Allow"), ("ask", "Ask an operator"), ("deny", "Deny")], max_length=5
                    ),
                ),
                (
                    "applies_to",
                    models.CharField(
                        choices=[
                            ("tool", "Tool calls"),
                            ("permission", "Permission requests from coding agents"),
                            ("resource", "Resource reads"),
                            ("prompt", "Prompt gets"),
                        ],
                        default="tool",
                        max_length=20,
                    ),
                ),
                (
                    "tool_glob",
                    models.CharField(default="*", help_text="Exposed tool name pattern, e.g. github_*", max_length=200),
                ),
                (
                    "annotations",
                    models.JSONField(
                        blank=True,
                        default=dict,
                        help_text='e.g. {"readOnlyHint": true}; counted only for trusted servers',
                    ),
                ),
                (
                    "conditions",
                    models.JSONField(
                        blank=True, default=list, help_text='e.g. [{"path": "amount", "op": "gt", "value": 100}]'
                    ),
                ),
                ("message", models.TextField(blank=True, help_text="Told to the client when this rule denies.")),
                (
                    "approval_timeout_seconds",
                    models.PositiveIntegerField(
                        blank=True,
                        help_text="How long a call it holds waits for approvals; blank: APPROVAL_TIMEOUT_SECONDS.",
                        null=True,
                        validators=[
                            django.core.validators.MinValueValidator(1),
                            django.core.validators.MaxValueValidator(604800),
                        ],
                    ),
                ),
                (
                    "approvals_needed",
                    models.PositiveSmallIntegerField(
                        default=1,
                        help_text="Distinct operators who must approve a call it asks about; one denial ends the call.",
                        validators=[
                            django.core.validators.MinValueValidator(1),
                            django.core.validators.MaxValueValidator(10),
                        ],
                    ),
                ),
                (
                    "separation_of_duties",
                    models.CharField(
                        choices=[
                            ("inherit", "As the console's default (SEPARATION_OF_DUTIES)"),
                            ("require", "Not by the token's owner"),
                            ("off", "The token's owner may approve"),
                        ],
                        default="inherit",
                        max_length=7,
                    ),
                ),
                ("enabled", models.BooleanField(default=True)),
                ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                (
                    "client",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="rules",
                        to="approvals.clienttoken",
                    ),
                ),
                (
                    "server",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="rules",
                        to="approvals.server",
                    ),
                ),
            ],
            options={
                "ordering": ["position", "id"],
            },
        ),
        migrations.CreateModel(
            name="Call",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("tool", "Tool calls"),
                            ("permission", "Permission requests from coding agents"),
                            ("resource", "Resource reads"),
                            ("prompt", "Prompt gets"),
                        ],
                        db_index=True,
                        default="tool",
                        max_length=20,
                    ),
                ),
                (
                    "tool_name",
                    models.CharField(
                        help_text="The exposed name the client called; for a permission request, the agent's tool.",
                        max_length=200,
                    ),
                ),
                (
                    "request_id",
                    models.CharField(
                        db_index=True, help_text="Correlates the audit events of this call.", max_length=36
                    ),
                ),
                ("era", models.CharField(max_length=10)),
                ("protocol_version", models.CharField(max_length=20)),
                ("session_id", models.CharField(blank=True, db_index=True, max_length=64)),
                ("jsonrpc_id", models.JSONField(null=True)),
                ("progress_token", models.JSONField(blank=True, null=True)),
                ("arguments", models.JSONField(default=dict)),
                ("arguments_digest", models.CharField(max_length=64)),
                ("tool_digest", models.CharField(blank=True, max_length=64)),
                ("edited_arguments", models.JSONField(blank=True, null=True)),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("rejected", "Rejected (invalid arguments)"),
                            ("pending", "Waiting for an operator"),
                            ("approved", "Approved"),
                            ("denied", "Denied"),
                            ("expired", "Expired"),
                            ("cancelled", "Cancelled by the client"),
                            ("forwarded", "Running upstream"),
                            ("completed", "Completed"),
                            ("failed", "Failed"),
                        ],
                        db_index=True,
                        max_length=10,
                    ),
                ),
                (
                    "policy_action",
                    models.CharField(
                        blank=True,
                        choices=[("allow", "Allow"), ("ask", "Ask an operator"), ("deny", "Deny")],
                        max_length=5,
                    ),
                ),
                ("rule_name", models.CharField(blank=True, max_length=200)),
                ("decided_by_name", models.CharField(blank=True, max_length=150)),
                ("reason", models.TextField(blank=True)),
                ("approvals_needed", models.PositiveSmallIntegerField(default=1)),
                (
                    "separation_of_duties",
                    models.BooleanField(default=False, help_text="The owner of the calling token may not approve it."),
                ),
                ("result", models.JSONField(blank=True, null=True)),
                ("is_error", models.BooleanField(default=False)),
                ("error", models.TextField(blank=True)),
                ("received_at", models.DateTimeField(db_index=True, default=django.utils.timezone.now)),
                ("policy_at", models.DateTimeField(blank=True, null=True)),
                ("expires_at", models.DateTimeField(blank=True, null=True)),
                ("decided_at", models.DateTimeField(blank=True, null=True)),
                ("forwarded_at", models.DateTimeField(blank=True, null=True)),
                ("answered_at", models.DateTimeField(blank=True, null=True)),
                ("holder", models.CharField(blank=True, max_length=100)),
                ("lease_expires_at", models.DateTimeField(blank=True, null=True)),
                (
                    "decided_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "token",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT, related_name="calls", to="approvals.clienttoken"
                    ),
                ),
                (
                    "rule",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="calls",
                        to="approvals.policyrule",
                    ),
                ),
                (
                    "server",
                    models.ForeignKey(
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="calls",
                        to="approvals.server",
                    ),
                ),
            ],
            options={
                "ordering": ["-received_at", "-id"],
                "permissions": [("decide_call", "Approve, edit or deny pending calls")],
            },
        ),
        migrations.CreateModel(
            name="RetiredSecret",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("token_hash", models.CharField(max_length=64, unique=True)),
                ("prefix", models.CharField(blank=True, max_length=16)),
                ("retired_at", models.DateTimeField(default=django.utils.timezone.now)),
                ("valid_until", models.DateTimeField()),
                (
                    "token",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="retired_secrets",
                        to="approvals.clienttoken",
                    ),
                ),
            ],
            options={
                "ordering": ["-retired_at"],
            },
        ),
        migrations.CreateModel(
            name="InputRequest",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("method", models.CharField(max_length=40)),
                (
                    "mode",
                    models.CharField(
                        blank=True,
                        choices=[("form", "Form"), ("url", "URL")],
                        help_text="Elicitation only.",
                        max_length=4,
                    ),
                ),
                ("message", models.TextField(blank=True)),
                ("params", models.JSONField(default=dict)),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("pending", "Waiting for an answer"),
                            ("answered", "Accepted"),
                            ("declined", "Declined"),
                            ("cancelled", "Cancelled"),
                            ("expired", "Expired"),
                            ("passed_through", "Answered by the client"),
                            ("refused", "Refused"),
                        ],
                        db_index=True,
                        max_length=15,
                    ),
                ),
                ("routed_to", models.CharField(choices=[("operator", "Operator"), ("client", "Client")], max_length=8)),
                ("client_key", models.CharField(blank=True, db_index=True, max_length=100)),
                ("answer", models.JSONField(blank=True, null=True)),
                ("answered_by_name", models.CharField(blank=True, max_length=150)),
                (
                    "reason",
                    models.TextField(blank=True, help_text="Why it was refused, declined, cancelled or expired."),
                ),
                ("created_at", models.DateTimeField(db_index=True, default=django.utils.timezone.now)),
                ("answered_at", models.DateTimeField(blank=True, null=True)),
                ("expires_at", models.DateTimeField(blank=True, null=True)),
                (
                    "answered_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "call",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="input_requests", to="approvals.call"
                    ),
                ),
                (
                    "server",
                    models.ForeignKey(
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="input_requests",
                        to="approvals.server",
                    ),
                ),
            ],
            options={
                "ordering": ["created_at", "id"],
            },
        ),
        migrations.CreateModel(
            name="Tool",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("upstream_name", models.CharField(max_length=128)),
                ("exposed_name", models.CharField(db_index=True, max_length=200)),
                ("definition", models.JSONField()),
                ("digest", models.CharField(max_length=64)),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("active", "Active"),
                            ("needs_review", "Needs review"),
                            ("declined", "Rejected in review"),
                            ("rejected", "Rejected"),
                            ("removed", "Removed"),
                        ],
                        default="active",
                        max_length=20,
                    ),
                ),
                ("reason", models.TextField(blank=True)),
                ("warnings", models.JSONField(blank=True, default=list)),
                ("reviewed_digest", models.CharField(blank=True, max_length=64)),
                ("reviewed_definition", models.JSONField(blank=True, null=True)),
                ("first_seen_at", models.DateTimeField(default=django.utils.timezone.now)),
                ("last_changed_at", models.DateTimeField(default=django.utils.timezone.now)),
                ("last_seen_at", models.DateTimeField(default=django.utils.timezone.now)),
                (
                    "server",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="tools", to="approvals.server"
                    ),
                ),
            ],
            options={
                "ordering": ["exposed_name"],
            },
        ),
        migrations.AddField(
            model_name="call",
            name="tool",
            field=models.ForeignKey(
                null=True, on_delete=django.db.models.deletion.SET_NULL, related_name="calls", to="approvals.tool"
            ),
        ),
        migrations.CreateModel(
            name="ToolChange",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("added", "Added"),
                            ("changed", "Definition changed"),
                            ("rejected", "Rejected"),
                            ("restored", "Restored"),
                            ("removed", "Removed"),
                            ("accepted", "Accepted in review"),
                            ("declined", "Rejected in review"),
                        ],
                        max_length=10,
                    ),
                ),
                ("definition", models.JSONField()),
                ("digest", models.CharField(max_length=64)),
                ("previous_digest", models.CharField(blank=True, max_length=64)),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("active", "Active"),
                            ("needs_review", "Needs review"),
                            ("declined", "Rejected in review"),
                            ("rejected", "Rejected"),
                            ("removed", "Removed"),
                        ],
                        max_length=20,
                    ),
                ),
                ("reason", models.TextField(blank=True)),
                (
                    "actor_name",
                    models.CharField(
                        blank=True, help_text="Who accepted or rejected it, for a review.", max_length=150
                    ),
                ),
                ("at", models.DateTimeField(default=django.utils.timezone.now)),
                (
                    "tool",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="changes", to="approvals.tool"
                    ),
                ),
            ],
            options={
                "ordering": ["-at", "-id"],
                "abstract": False,
            },
        ),
        migrations.CreateModel(
            name="WebhookAttempt",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("number", models.PositiveIntegerField()),
                ("at", models.DateTimeField(default=django.utils.timezone.now)),
                ("status_code", models.PositiveSmallIntegerField(blank=True, null=True)),
                ("response_ms", models.FloatField(blank=True, null=True)),
                ("error", models.TextField(blank=True)),
                (
                    "requested_by",
                    models.CharField(blank=True, help_text="The admin who asked for a redelivery.", max_length=150),
                ),
                (
                    "delivery",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="attempt_rows",
                        to="approvals.webhookdelivery",
                    ),
                ),
            ],
            options={
                "ordering": ["number", "id"],
            },
        ),
        migrations.CreateModel(
            name="WebhookEndpoint",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("url", models.URLField(max_length=2000)),
                ("description", models.CharField(blank=True, max_length=200)),
                ("events", models.JSONField(default=list, help_text="The event types sent to this endpoint.")),
                (
                    "slack",
                    models.BooleanField(default=False, help_text="Post a Slack-compatible body: text with a link."),
                ),
                ("console_url", models.URLField(max_length=500)),
                ("secret", models.CharField(max_length=100)),
                ("enabled", models.BooleanField(default=True)),
                ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
                ("secret_rotated_at", models.DateTimeField(blank=True, null=True)),
                (
                    "created_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "ordering": ["id"],
                "permissions": [("manage_webhooks", "Add, change and delete webhook endpoints, and redeliver events")],
            },
        ),
        migrations.AddField(
            model_name="webhookdelivery",
            name="endpoint",
            field=models.ForeignKey(
                db_constraint=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="deliveries",
                to="approvals.webhookendpoint",
            ),
        ),
        migrations.CreateModel(
            name="CallApproval",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("username", models.CharField(max_length=150)),
                ("binding", models.CharField(max_length=64)),
                ("at", models.DateTimeField(default=django.utils.timezone.now)),
                (
                    "call",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="approvals", to="approvals.call"
                    ),
                ),
                (
                    "user",
                    models.ForeignKey(
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "ordering": ["at", "id"],
                "constraints": [
                    models.UniqueConstraint(fields=("call", "user", "binding"), name="call_approval_once_per_operator")
                ],
            },
        ),
        migrations.CreateModel(
            name="ResourceTemplate",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("upstream_name", models.CharField(max_length=200)),
                ("exposed_name", models.CharField(max_length=300)),
                ("definition", models.JSONField()),
                ("digest", models.CharField(max_length=64)),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("active", "Active"),
                            ("needs_review", "Needs review"),
                            ("declined", "Rejected in review"),
                            ("rejected", "Rejected"),
                            ("removed", "Removed"),
                        ],
                        default="active",
                        max_length=20,
                    ),
                ),
                ("reason", models.TextField(blank=True)),
                ("reviewed_digest", models.CharField(blank=True, max_length=64)),
                ("reviewed_definition", models.JSONField(blank=True, null=True)),
                ("first_seen_at", models.DateTimeField(default=django.utils.timezone.now)),
                ("last_changed_at", models.DateTimeField(default=django.utils.timezone.now)),
                ("last_seen_at", models.DateTimeField(default=django.utils.timezone.now)),
                ("uri", models.CharField(max_length=2000)),
                (
                    "server",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="%(class)ss", to="approvals.server"
                    ),
                ),
            ],
            options={
                "ordering": ["uri"],
                "abstract": False,
                "constraints": [
                    models.UniqueConstraint(fields=("server", "uri"), name="resourcetemplate_unique_uri_per_server"),
                    models.UniqueConstraint(
                        condition=models.Q(("status__in", ["active", "needs_review", "declined"])),
                        fields=("uri",),
                        name="resourcetemplate_unique_held_uri",
                    ),
                ],
            },
        ),
        migrations.CreateModel(
            name="Resource",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("upstream_name", models.CharField(max_length=200)),
                ("exposed_name", models.CharField(max_length=300)),
                ("definition", models.JSONField()),
                ("digest", models.CharField(max_length=64)),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("active", "Active"),
                            ("needs_review", "Needs review"),
                            ("declined", "Rejected in review"),
                            ("rejected", "Rejected"),
                            ("removed", "Removed"),
                        ],
                        default="active",
                        max_length=20,
                    ),
                ),
                ("reason", models.TextField(blank=True)),
                ("reviewed_digest", models.CharField(blank=True, max_length=64)),
                ("reviewed_definition", models.JSONField(blank=True, null=True)),
                ("first_seen_at", models.DateTimeField(default=django.utils.timezone.now)),
                ("last_changed_at", models.DateTimeField(default=django.utils.timezone.now)),
                ("last_seen_at", models.DateTimeField(default=django.utils.timezone.now)),
                ("uri", models.CharField(max_length=2000)),
                (
                    "server",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="%(class)ss", to="approvals.server"
                    ),
                ),
            ],
            options={
                "ordering": ["uri"],
                "abstract": False,
                "constraints": [
                    models.UniqueConstraint(fields=("server", "uri"), name="resource_unique_uri_per_server"),
                    models.UniqueConstraint(
                        condition=models.Q(("status__in", ["active", "needs_review", "declined"])),
                        fields=("uri",),
                        name="resource_unique_held_uri",
                    ),
                ],
            },
        ),
        migrations.CreateModel(
            name="Prompt",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("upstream_name", models.CharField(max_length=200)),
                ("exposed_name", models.CharField(max_length=300)),
                ("definition", models.JSONField()),
                ("digest", models.CharField(max_length=64)),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("active", "Active"),
                            ("needs_review", "Needs review"),
                            ("declined", "Rejected in review"),
                            ("rejected", "Rejected"),
                            ("removed", "Removed"),
                        ],
                        default="active",
                        max_length=20,
                    ),
                ),
                ("reason", models.TextField(blank=True)),
                ("reviewed_digest", models.CharField(blank=True, max_length=64)),
                ("reviewed_definition", models.JSONField(blank=True, null=True)),
                ("first_seen_at", models.DateTimeField(default=django.utils.timezone.now)),
                ("last_changed_at", models.DateTimeField(default=django.utils.timezone.now)),
                ("last_seen_at", models.DateTimeField(default=django.utils.timezone.now)),
                (
                    "server",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="%(class)ss", to="approvals.server"
                    ),
                ),
            ],
            options={
                "ordering": ["exposed_name"],
                "constraints": [
                    models.UniqueConstraint(fields=("server", "upstream_name"), name="prompt_unique_upstream_name"),
                    models.UniqueConstraint(
                        condition=models.Q(("status__in", ["active", "needs_review", "declined"])),
                        fields=("exposed_name",),
                        name="prompt_unique_held_exposed_name",
                    ),
                ],
            },
        ),
        migrations.CreateModel(
            name="SurfaceChange",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("added", "Added"),
                            ("changed", "Definition changed"),
                            ("rejected", "Rejected"),
                            ("restored", "Restored"),
                            ("removed", "Removed"),
                            ("accepted", "Accepted in review"),
                            ("declined", "Rejected in review"),
                        ],
                        max_length=10,
                    ),
                ),
                ("definition", models.JSONField()),
                ("digest", models.CharField(max_length=64)),
                ("previous_digest", models.CharField(blank=True, max_length=64)),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("active", "Active"),
                            ("needs_review", "Needs review"),
                            ("declined", "Rejected in review"),
                            ("rejected", "Rejected"),
                            ("removed", "Removed"),
                        ],
                        max_length=20,
                    ),
                ),
                ("reason", models.TextField(blank=True)),
                (
                    "actor_name",
                    models.CharField(
                        blank=True, help_text="Who accepted or rejected it, for a review.", max_length=150
                    ),
                ),
                ("at", models.DateTimeField(default=django.utils.timezone.now)),
                ("item_id", models.PositiveBigIntegerField()),
                (
                    "item_type",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="+", to="contenttypes.contenttype"
                    ),
                ),
            ],
            options={
                "ordering": ["-at", "-id"],
                "abstract": False,
                "indexes": [models.Index(fields=["item_type", "item_id"], name="surfacechange_item")],
            },
        ),
        migrations.AddConstraint(
            model_name="tool",
            constraint=models.UniqueConstraint(fields=("server", "upstream_name"), name="tool_unique_upstream_name"),
        ),
        migrations.AddConstraint(
            model_name="tool",
            constraint=models.UniqueConstraint(
                condition=models.Q(("status__in", ["active", "needs_review", "declined"])),
                fields=("exposed_name",),
                name="tool_unique_held_exposed_name",
            ),
        ),
        migrations.AddIndex(
            model_name="call",
            index=models.Index(
                condition=models.Q(("status", "pending")),
                fields=["token", "tool_name", "received_at"],
                name="call_pending_queue",
            ),
        ),
        migrations.RunPython(create_audit_head, migrations.RunPython.noop),
        migrations.RunPython(on_postgresql(APPEND_ONLY_AND_SEARCH), on_postgresql(DROP_APPEND_ONLY_AND_SEARCH)),
        migrations.RunPython(on_postgresql(HEAD_GUARD), on_postgresql(DROP_HEAD_GUARD)),
        migrations.RunPython(on_postgresql(PRUNE_GUARDS), on_postgresql(DROP_PRUNE_GUARDS)),
    ]
