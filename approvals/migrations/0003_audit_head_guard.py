"""On PostgreSQL, triggers that keep the audit chain's head moving forward and its tables from being truncated.

The head may not be deleted, nor updated except forward: its seq only grows (and its hash
changes only with it), and so does its anchor, which pruning alone moves. Neither the
events nor the head may be truncated. The console's own role in the production recipe
cannot drop or disable a trigger; the tables' owner can, which is what the HMAC links and
the witness outside the database are for (approvals.audit.witness).
"""

from django.db import migrations

from approvals.migrations import on_postgresql

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


class Migration(migrations.Migration):
    dependencies = [
        ("approvals", "0002_tool_review"),
    ]

    operations = [
        migrations.RunPython(on_postgresql(HEAD_GUARD), on_postgresql(DROP_HEAD_GUARD)),
    ]
