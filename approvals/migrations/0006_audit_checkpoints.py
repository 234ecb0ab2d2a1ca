"""The audit log's public chain and its signed checkpoints, and free-text search over all of an event's data.

Every event already written gets its public chain value, from the anchor on (the public
chain of a pruned log starts at its anchor). On PostgreSQL the append-only trigger is
set aside for that one update, as the tables' owner who runs migrations may; the head
moves its public value only, which its guard allows. The trigram index moves from the
arguments alone to the whole of an event's data (approvals.audit_log.query.search_expression).
"""

from django.db import migrations, models

from approvals.audit.encoding import HASHED, encode_event
from approvals.audit.public_chain import public_chain_value

GENESIS = "0" * 64
BATCH = 2000

SEARCH = [
    "DROP INDEX IF EXISTS audit_arguments_trgm",
    "CREATE INDEX audit_text_trgm ON approvals_auditevent USING gin (upper(data::text) gin_trgm_ops)",
]
DROP_SEARCH = [
    "DROP INDEX IF EXISTS audit_text_trgm",
    "CREATE INDEX audit_arguments_trgm ON approvals_auditevent USING gin (upper(data ->> 'arguments') gin_trgm_ops)",
]


def on_postgresql(statements):
    def execute(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            for statement in statements:
                schema_editor.execute(statement)

    return execute


def chain_publicly(apps, schema_editor):
    events, heads = apps.get_model("approvals", "AuditEvent"), apps.get_model("approvals", "AuditHead")
    head = heads.objects.filter(pk=1).first()
    if head is None:
        return
    postgres = schema_editor.connection.vendor == "postgresql"
    if postgres:
        schema_editor.execute("ALTER TABLE approvals_auditevent DISABLE TRIGGER approvals_audit_append_only")
    value, changed = GENESIS, []
    for row in events.objects.order_by("seq").values_list("pk", *HASHED).iterator(chunk_size=BATCH):
        value = public_chain_value(value, encode_event(row[1:]))
        changed.append(events(pk=row[0], public_hash=value))
        if len(changed) >= BATCH:
            events.objects.bulk_update(changed, ["public_hash"])
            changed = []
    events.objects.bulk_update(changed, ["public_hash"])
    if postgres:
        schema_editor.execute("ALTER TABLE approvals_auditevent ENABLE TRIGGER approvals_audit_append_only")
    heads.objects.filter(pk=1).update(public_hash=value, anchor_public_hash=GENESIS)


class Migration(migrations.Migration):
    dependencies = [
        ("approvals", "0005_sso"),
    ]

    operations = [
        migrations.CreateModel(
            name="AuditCheckpoint",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("seq", models.BigIntegerField(db_index=True)),
                ("public_hash", models.CharField(max_length=64)),
                ("at", models.DateTimeField()),
                ("signed", models.TextField()),
                ("signature", models.CharField(max_length=100)),
                ("key_id", models.CharField(max_length=64)),
            ],
            options={
                "ordering": ["-seq", "-id"],
            },
        ),
        migrations.AddField(
            model_name="auditevent",
            name="public_hash",
            field=models.CharField(default="", max_length=64),
        ),
        migrations.AddField(
            model_name="audithead",
            name="anchor_public_hash",
            field=models.CharField(default=GENESIS, max_length=64),
        ),
        migrations.AddField(
            model_name="audithead",
            name="public_hash",
            field=models.CharField(default=GENESIS, max_length=64),
        ),
        migrations.RunPython(chain_publicly, migrations.RunPython.noop),
        migrations.RunPython(on_postgresql(SEARCH), on_postgresql(DROP_SEARCH)),
    ]
