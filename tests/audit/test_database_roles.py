"""On PostgreSQL: what the console's role cannot do to the audit log, and what verification shows of the owner's doing.

The role made here has the grants deploy/postgres-init.sh gives `console_app`: rows only.
CREATE ROLE is transactional, so the role goes with the test's transaction.
"""

import os
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from approvals.audit import retention, verify
from approvals.audit.models import AuditEvent, AuditHead
from tests.audit.conftest import cut_the_end, trigger_disabled

pytestmark = pytest.mark.postgres

CUTTING_THE_END = [
    "DELETE FROM approvals_audithead",
    "UPDATE approvals_audithead SET seq = 7",
    "DELETE FROM approvals_auditevent WHERE seq >= 8",
    "TRUNCATE approvals_auditevent, approvals_audithead",
    "ALTER TABLE approvals_audithead DISABLE TRIGGER USER",
    "DROP TRIGGER approvals_audit_head_forward_only ON approvals_audithead",
    "SET session_replication_role = replica",
]


@pytest.fixture
def app_role(db):
    role = f"console_app_test_{os.getpid()}"
    with connection.cursor() as cursor:
        cursor.execute(f"CREATE ROLE {role} NOLOGIN")
        cursor.execute(f"GRANT USAGE ON SCHEMA public TO {role}")
        cursor.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {role}")
        cursor.execute(f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO {role}")
    return role


def as_role(role, *statements):
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"SET LOCAL ROLE {role}")
        for statement in statements:
            cursor.execute(statement)


@pytest.mark.parametrize("statement", CUTTING_THE_END)
def test_it_stops_the_consoles_role_from_cutting_the_end_of_the_chain(chain, app_role, statement):
    with pytest.raises(DatabaseError):
        as_role(app_role, statement)
    assert AuditEvent.objects.count() == 10 and AuditHead.objects.get().seq == 10
    assert verify.verify_chain().ok


def test_it_stops_the_consoles_role_from_deleting_newest_events_even_under_the_prune_switch(chain, app_role):
    # The switch is any session's to set (pruning needs it); it reaches no further than the anchor.
    with pytest.raises(DatabaseError, match="only up to the anchor"):
        as_role(
            app_role,
            "SELECT set_config('approvals.audit_prune', 'on', true)",
            "DELETE FROM approvals_auditevent WHERE seq >= 8",
        )
    with pytest.raises(DatabaseError, match="older than 23 hours"):
        as_role(app_role, f"UPDATE approvals_audithead SET anchor_seq = 10, anchor_hash = '{chain[-1].hash}'")
    assert AuditEvent.objects.count() == 10 and verify.verify_chain().ok


def test_it_stops_the_consoles_role_from_backdating_an_event_to_anchor_on_it(chain, app_role):
    with pytest.raises(DatabaseError, match="not earlier"), transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(f"SET LOCAL ROLE {app_role}")
        fields = {name: getattr(chain[-1], name) for name in ("actor_type", "actor_name", "action", "data")}
        long_ago = timezone.now() - timedelta(days=400)
        AuditEvent.objects.create(seq=11, at=long_ago, prev_hash=chain[-1].hash, hash="f" * 64, **fields)
    assert AuditEvent.objects.count() == 10


def test_it_still_prunes_old_events_through_the_anchor(chain, settings):
    settings.AUDIT_RETENTION_DAYS = 1
    with trigger_disabled():
        AuditEvent.objects.filter(seq__lte=4).update(at=timezone.now() - timedelta(days=3))
    assert retention.prune().deleted == 4
    assert AuditHead.objects.get().anchor_seq == 4 and verify.verify_chain().ok


def test_it_lets_the_owner_cut_the_end_and_verify_audit_reports_it(chain):
    call_command("verify_audit")
    cut_the_end(chain, keep=7)
    assert AuditEvent.objects.count() == 7
    with pytest.raises(CommandError, match="broken at seq 8: events an earlier verification saw are gone"):
        call_command("verify_audit")


def test_it_refuses_to_delete_lower_or_truncate_the_head_even_for_the_owner(chain):
    for statement, refusal in [
        ("DELETE FROM approvals_audithead", "cannot be deleted"),
        ("UPDATE approvals_audithead SET seq = 9", "only moves forward"),
        ("UPDATE approvals_audithead SET hash = repeat('0', 64)", "only moves forward"),
        ("UPDATE approvals_audithead SET anchor_seq = 0, anchor_hash = 'x'", "only moves forward"),
        ("TRUNCATE approvals_audithead", "cannot be truncated"),
        ("TRUNCATE approvals_auditevent", "cannot be truncated"),
    ]:
        with pytest.raises(DatabaseError, match=refusal), transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(statement)
    assert AuditHead.objects.get().seq == 10 and AuditEvent.objects.count() == 10
