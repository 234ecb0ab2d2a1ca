"""Webhook endpoints, the deliveries of events to them, and every attempt at each delivery."""

from django.db import models
from django.utils import timezone

from approvals.db.sealed import SealedField
from approvals.webhooks.transport import answered_text

# What an endpoint may subscribe to, and what each stands for on its page.
EVENT_TYPES = {
    "call.pending": "A call waits for a decision",
    "call.decided": "An operator approved or denied a call",
    "call.finished": "A call ended: completed, failed, expired or cancelled",
    "call.escalated": "A call nears its expiry undecided (its rule escalates it)",
    "input.requested": "An input request waits for an answer",
    "tool.needs_review": "Tools changed and wait for an admin's review",
    "server.needs_authorization": "An upstream server's OAuth connection needs a person to Connect it again",
    "audit.verification_failed": "Verifying the audit log failed",
}


class WebhookEndpoint(models.Model):
    """A URL the console posts events to, signed with the endpoint's secret (Standard Webhooks)."""

    url = models.URLField(max_length=2000)
    description = models.CharField(max_length=200, blank=True)
    events = models.JSONField(default=list, help_text="The event types sent to this endpoint.")
    slack = models.BooleanField(default=False, help_text="Post a Slack-compatible body: text with a link.")
    # The console's own address as admins reach it, for the links in bodies; events come from anywhere.
    console_url = models.URLField(max_length=500)
    # Kept whole: every delivery is signed with it. Shown once, when made or rotated.
    secret = SealedField()
    enabled = models.BooleanField(default=True)
    created_at = models.DateTimeField(default=timezone.now)
    created_by = models.ForeignKey("auth.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    secret_rotated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        permissions = [("manage_webhooks", "Add, change and delete webhook endpoints, and redeliver events")]

    def __str__(self):
        return f"webhook {self.pk} {self.url}"


class WebhookDelivery(models.Model):
    """One event for one endpoint: sent at once, then retried with growing delays until it is delivered."""

    # No database constraint: on PostgreSQL checking one would lock the endpoint's row inside the transaction of
    # the call whose event this is, which may hold the audit head already, while an admin deleting the endpoint
    # holds its row and waits for the head. Django still deletes an endpoint's deliveries with it, and the sweep
    # drops one written for an endpoint deleted meanwhile.
    endpoint = models.ForeignKey(
        WebhookEndpoint, on_delete=models.CASCADE, related_name="deliveries", db_constraint=False
    )
    message_id = models.CharField(max_length=40, unique=True)
    event_type = models.CharField(max_length=40)
    payload = models.JSONField()
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    attempts = models.PositiveIntegerField(default=0)
    delivered_at = models.DateTimeField(null=True, blank=True)
    # When the next automatic attempt is due; None once delivered or out of attempts.
    next_attempt_at = models.DateTimeField(null=True, blank=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return f"{self.event_type} {self.message_id} to endpoint {self.endpoint_id}"

    @property
    def state(self) -> str:
        if self.delivered_at is not None:
            return "delivered"
        return "retrying" if self.next_attempt_at is not None else "failed"


class WebhookAttempt(models.Model):
    """One POST of a delivery: what the endpoint answered, how fast, or why it failed."""

    delivery = models.ForeignKey(WebhookDelivery, on_delete=models.CASCADE, related_name="attempt_rows")
    number = models.PositiveIntegerField()
    at = models.DateTimeField(default=timezone.now)
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    response_ms = models.FloatField(null=True, blank=True)
    error = models.TextField(blank=True)
    requested_by = models.CharField(max_length=150, blank=True, help_text="The admin who asked for a redelivery.")
    # What was sent and the start of what came back, for whoever works out why an endpoint refuses.
    request_body = models.TextField(blank=True)
    response_body = models.TextField(blank=True)

    class Meta:
        ordering = ["number", "id"]

    @property
    def ok(self) -> bool:
        return not self.error

    @property
    def detail(self) -> str:
        """What the error says beyond the status code shown beside it."""
        return "" if self.error == answered_text(self.status_code) else self.error
