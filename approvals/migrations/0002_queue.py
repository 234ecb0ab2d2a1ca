"""On PostgreSQL: the prune switch cannot take the newest audit events, not even for the console's own role.

The switch (approvals.audit_prune) is any session's to set, since pruning needs it. Three
triggers leave it only the old events:

- events are deleted only up to the head's anchor, which pruning moves first;
- the anchor moves only onto an existing event, with that hash, older than 23 hours (the
  shortest retention is a day; the hour spared covers clocks that disagree);
- an event is inserted only with a time at most an hour before the database's clock, so
  no event can be made old to serve as an anchor.

Whoever holds the console's login can so delete, with the switch, only events older than
23 hours, and verification still names an anchor no audit.pruned event attests. The
tables' owner can drop the triggers; the HMAC links and the witness are for that.
"""

import importlib

from django.db import migrations

INITIAL = importlib.import_module("approvals.migrations.0001_initial")

GUARDS = [
    """
    CREATE OR REPLACE FUNCTION approvals_audit_prune_to_anchor() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
        anchor bigint;
    BEGIN
        SELECT anchor_seq INTO anchor FROM approvals_audithead WHERE id = 1;
        IF EXISTS (SELECT 1 FROM pruned WHERE seq > COALESCE(anchor, 0)) THEN
            RAISE EXCEPTION 'audit events are deleted only up to the anchor (seq %)', COALESCE(anchor, 0)
                USING ERRCODE = 'insufficient_privilege',
                      HINT = 'Pruning moves the anchor first (approvals.audit.retention.prune).';
        END IF;
        RETURN NULL;
    END $$
    """,
    """
    CREATE TRIGGER approvals_audit_prune_to_anchor AFTER DELETE ON approvals_auditevent
        REFERENCING OLD TABLE AS pruned FOR EACH STATEMENT EXECUTE FUNCTION approvals_audit_prune_to_anchor()
    """,
    """
    CREATE OR REPLACE FUNCTION approvals_audit_no_backdating() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF EXISTS (SELECT 1 FROM added WHERE at < now() - interval '1 hour') THEN
            RAISE EXCEPTION 'audit events are written at the time they happen, not earlier'
                USING ERRCODE = 'insufficient_privilege';
        END IF;
        RETURN NULL;
    END $$
    """,
    """
    CREATE TRIGGER approvals_audit_no_backdating AFTER INSERT ON approvals_auditevent
        REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION approvals_audit_no_backdating()
    """,
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
]

DROP_GUARDS = [
    "DROP TRIGGER IF EXISTS approvals_audit_no_backdating ON approvals_auditevent",
    "DROP FUNCTION IF EXISTS approvals_audit_no_backdating()",
    "DROP TRIGGER IF EXISTS approvals_audit_prune_to_anchor ON approvals_auditevent",
    "DROP FUNCTION IF EXISTS approvals_audit_prune_to_anchor()",
    # The head's guard as 0001 made it.
    INITIAL.HEAD_GUARD[0],
]


class Migration(migrations.Migration):
    dependencies = [("approvals", "0001_initial")]

    operations = [
        migrations.RunPython(INITIAL.on_postgresql(GUARDS), INITIAL.on_postgresql(DROP_GUARDS)),
    ]
