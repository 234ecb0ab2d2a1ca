"""PostgreSQL only: the events table refuses UPDATE and DELETE, and free-text search gets an index.

The trigger lets a DELETE through only when the transaction has set
approvals.audit_prune to 'on', which approvals.audit_retention.prune alone does.
TRUNCATE is not refused: the test suite empties tables with it between tests, and
verification still notices, as the head then points past the last event.
SQLite gets neither: an embedded console relies on verification alone.

The trigram index covers exactly approvals.audit_query.search_expression().
"""

from django.db import migrations

FORWARD = [
    """
    CREATE OR REPLACE FUNCTION approvals_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'DELETE' AND current_setting('approvals.audit_prune', true) = 'on' THEN
            RETURN NULL;
        END IF;
        RAISE EXCEPTION 'audit events are append-only: % refused', TG_OP
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'Events leave only by pruning (approvals.audit_retention.prune).';
    END $$
    """,
    """
    CREATE TRIGGER approvals_audit_append_only BEFORE UPDATE OR DELETE ON approvals_auditevent
        FOR EACH STATEMENT EXECUTE FUNCTION approvals_audit_append_only()
    """,
    "CREATE EXTENSION IF NOT EXISTS pg_trgm",
    "CREATE INDEX audit_arguments_trgm ON approvals_auditevent USING gin (upper(data ->> 'arguments') gin_trgm_ops)",
]

BACKWARD = [
    "DROP INDEX IF EXISTS audit_arguments_trgm",
    "DROP TRIGGER IF EXISTS approvals_audit_append_only ON approvals_auditevent",
    "DROP FUNCTION IF EXISTS approvals_audit_append_only()",
]


def run(statements):
    def apply(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            for statement in statements:
                schema_editor.execute(statement, params=None)

    return apply


class Migration(migrations.Migration):
    dependencies = [("approvals", "0003_audit_retention_and_indexes")]

    operations = [migrations.RunPython(run(FORWARD), run(BACKWARD))]
