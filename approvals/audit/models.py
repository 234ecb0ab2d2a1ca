"""The audit log's tables: the events, the chain's head, retention settings and verification results."""

from django.db import models
from django.utils import timezone


class AuditEvent(models.Model):
    """An append-only, hash-chained record of everything that happened (see approvals.audit.chain)."""

    seq = models.BigIntegerField(unique=True)
    at = models.DateTimeField(default=timezone.now, db_index=True)
    actor_type = models.CharField(max_length=10)
    actor_id = models.BigIntegerField(null=True, blank=True)
    actor_name = models.CharField(max_length=150)
    action = models.CharField(max_length=40)
    request_id = models.CharField(max_length=36, blank=True, db_index=True)
    call_id = models.BigIntegerField(null=True, blank=True)
    server_id = models.BigIntegerField(null=True, blank=True)
    tool_id = models.BigIntegerField(null=True, blank=True)
    token_id = models.BigIntegerField(null=True, blank=True)
    data = models.JSONField(default=dict)
    prev_hash = models.CharField(max_length=64)
    hash = models.CharField(max_length=64)

    class Meta:
        ordering = ["seq"]
        permissions = [("export_audit", "Export and verify the audit log")]
        # Each filter of the audit page, alone and with an action, ending in seq, so that a
        # filtered page in seq order is one backward index range scan however long the
        # log grows ("this tool's denials", "this operator's approvals").
        indexes = [
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
        ]


class AuditHead(models.Model):
    """The chain's tip and its anchor. One row, created by a migration.

    The anchor is where verification starts: genesis until events are pruned, then
    the sequence number and hash of the last pruned event.
    """

    GENESIS = "0" * 64

    seq = models.BigIntegerField(default=0)
    hash = models.CharField(max_length=64, default=GENESIS)
    anchor_seq = models.BigIntegerField(default=0)
    anchor_hash = models.CharField(max_length=64, default=GENESIS)


class AuditSettings(models.Model):
    """What admins change at runtime; absent or null fields fall back to the environment."""

    retention_days = models.PositiveIntegerField(null=True, blank=True, help_text="0 keeps events forever.")
    updated_by_name = models.CharField(max_length=150, blank=True)
    updated_at = models.DateTimeField(null=True, blank=True)


class AuditVerification(models.Model):
    """One run of the chain verification, kept so that the audit page can show the last result."""

    started_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)
    ok = models.BooleanField(default=False)
    checked = models.BigIntegerField(default=0)
    first_seq = models.BigIntegerField(null=True, blank=True)
    last_seq = models.BigIntegerField(null=True, blank=True)
    broken_seq = models.BigIntegerField(null=True, blank=True)
    expected = models.TextField(blank=True)
    found = models.TextField(blank=True)
    problem = models.TextField(blank=True)
    run_by = models.CharField(max_length=150)

    class Meta:
        ordering = ["-started_at", "-id"]


class AuditForwardCursor(models.Model):
    """How far the log has been forwarded to one destination (AUDIT_FORWARD_URL without its secrets).

    `seq` and `chain_value` are those of the last event the receiver acknowledged: forwarding
    resumes after it, and continues the public chain from its value. A process forwards while it
    holds the row's lease (`holder`, `held_until`), so two workers never send the same events at once.
    """

    destination = models.CharField(max_length=500, unique=True)
    seq = models.BigIntegerField(default=0)
    chain_value = models.CharField(max_length=64, default=AuditHead.GENESIS)
    acknowledged_at = models.DateTimeField(null=True, blank=True)
    attempted_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True)
    holder = models.CharField(max_length=100, blank=True)
    held_until = models.DateTimeField(null=True, blank=True)
