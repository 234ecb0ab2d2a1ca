"""Input requests: what an upstream server asked for during a call, and who answered it."""

from django.db import models
from django.utils import timezone

from approvals.catalog.models import Server


class InputRequest(models.Model):
    """Something an upstream server asked for during a call: an elicitation (form or URL), or sampling."""

    class Mode(models.TextChoices):
        FORM = "form"
        URL = "url", "URL"

    class Status(models.TextChoices):
        PENDING = "pending", "Waiting for an answer"
        ANSWERED = "answered", "Accepted"
        DECLINED = "declined"
        CANCELLED = "cancelled"
        EXPIRED = "expired"
        PASSED_THROUGH = "passed_through", "Answered by the client"
        REFUSED = "refused"

    class Route(models.TextChoices):
        OPERATOR = "operator"
        CLIENT = "client"

    # By name: calls, the package above, drives its input requests.
    call = models.ForeignKey("approvals.Call", on_delete=models.CASCADE, related_name="input_requests")
    server = models.ForeignKey(Server, null=True, on_delete=models.SET_NULL, related_name="input_requests")
    method = models.CharField(max_length=40)
    mode = models.CharField(max_length=4, choices=Mode.choices, blank=True, help_text="Elicitation only.")
    message = models.TextField(blank=True)
    params = models.JSONField(default=dict)
    status = models.CharField(max_length=15, choices=Status.choices, db_index=True)
    routed_to = models.CharField(max_length=8, choices=Route.choices)
    # What the client knows this request by: the id of a legacy request, the key of an input_required entry.
    client_key = models.CharField(max_length=100, blank=True, db_index=True)
    answer = models.JSONField(null=True, blank=True)
    answered_by = models.ForeignKey("auth.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    answered_by_name = models.CharField(max_length=150, blank=True)
    reason = models.TextField(blank=True, help_text="Why it was refused, declined, cancelled or expired.")
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    answered_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self):
        return f"input request {self.pk} ({self.method}) of call {self.call_id}"
