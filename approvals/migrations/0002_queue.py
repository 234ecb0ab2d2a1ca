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


ANCHOR_CHECK = """
        IF NEW.anchor_seq > OLD.anchor_seq AND NOT EXISTS (
            SELECT 1 FROM approvals_auditevent
            WHERE seq = NEW.anchor_seq AND hash = NEW.anchor_hash AND at < now() - interval '23 hours'
        ) THEN
            RAISE EXCEPTION 'the audit anchor moves only onto an event older than 23 hours (seq %)', NEW.anchor_seq
                USING ERRCODE = 'insufficient_privilege';
        END IF;
        RETURN NEW;"""

# The head's guard of 0001, checking also where the anchor moves.
HEAD_GUARD = INITIAL.HEAD_GUARD[0].replace("\n        RETURN NEW;", ANCHOR_CHECK, 1)
assert INITIAL.HEAD_GUARD[0] != HEAD_GUARD

GUARDS = [
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
    HEAD_GUARD,
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
