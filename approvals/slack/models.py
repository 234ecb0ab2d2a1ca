"""Who a Slack user is in the console, and the message each waiting call was posted as."""

from django.db import models
from django.utils import timezone

from approvals.calls.models import Call


class SlackLink(models.Model):
    """A Slack user of one workspace, who decides in Slack as this console person."""

    class How(models.TextChoices):
        ACCOUNT = "account", "Confirmed on the person's account page"
        EMAIL = "email", "Matched by a confirmed email"

    user = models.ForeignKey("auth.User", on_delete=models.CASCADE, related_name="slack_links")
    team_id = models.CharField(max_length=32)
    slack_user_id = models.CharField(max_length=32)
    slack_name = models.CharField(max_length=150, blank=True)
    how = models.CharField(max_length=10, choices=How.choices)
    linked_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["linked_at", "id"]
        constraints = [models.UniqueConstraint(fields=["team_id", "slack_user_id"], name="slack_link_once")]

    def __str__(self):
        return f"{self.identity} as {self.user}"

    @property
    def identity(self) -> str:
        """How audit events name the Slack user: the device a decision came through."""
        return f"{self.team_id}:{self.slack_user_id}"


class SlackMessage(models.Model):
    """The message a waiting call was posted as: where, and the binding it showed, to update it in place."""

    call = models.OneToOneField(Call, on_delete=models.CASCADE, related_name="slack_message")
    # The channel as the rule or server names it, then as Slack answers it (its id), which chat.update needs.
    channel = models.CharField(max_length=81)
    ts = models.CharField(max_length=32, blank=True)
    binding = models.CharField(max_length=64, blank=True)
    error = models.TextField(blank=True)
    # Posts tried, and when the last began: one refused (rate limited, say) or lost with its process is tried again.
    attempts = models.PositiveSmallIntegerField(default=0)
    tried_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(null=True, blank=True)

    def __str__(self):
        return f"Slack message of call {self.call_id}"
