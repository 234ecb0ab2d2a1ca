"""Policy rules: the ordered rules that allow, deny or hold each call."""

import uuid

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils import timezone

from approvals.catalog.models import Server, slack_channel_field
from approvals.policy.kinds import CallKind
from approvals.tokens.models import ClientToken


class PolicyRule(models.Model):
    """One ordered rule: the first enabled rule that matches a call decides it."""

    class Action(models.TextChoices):
        ALLOW = "allow"
        ASK = "ask", "Ask an operator"
        DENY = "deny"

    class SeparationOfDuties(models.TextChoices):
        """Whether the owner of the calling token may approve a call the rule asks about."""

        INHERIT = "inherit", "As the console's default (SEPARATION_OF_DUTIES)"
        REQUIRE = "require", "Not by the token's owner"
        OFF = "off", "The token's owner may approve"

    MAX_APPROVALS_NEEDED = 10
    MAX_APPROVAL_TIMEOUT_SECONDS = 7 * 24 * 3600

    # A rule's identity in exported files: names are optional and may change, ids differ between databases.
    uid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    position = models.PositiveIntegerField(default=0, db_index=True)
    name = models.CharField(max_length=100, blank=True)
    action = models.CharField(max_length=5, choices=Action.choices)
    applies_to = models.CharField(max_length=20, choices=CallKind.choices, default=CallKind.TOOL)
    server = models.ForeignKey(Server, null=True, blank=True, on_delete=models.CASCADE, related_name="rules")
    tool_glob = models.CharField(max_length=200, default="*", help_text="Exposed tool name pattern, e.g. github_*")
    client = models.ForeignKey(ClientToken, null=True, blank=True, on_delete=models.CASCADE, related_name="rules")
    annotations = models.JSONField(
        default=dict, blank=True, help_text='e.g. {"readOnlyHint": true}; counted only for trusted servers'
    )
    conditions = models.JSONField(
        default=list, blank=True, help_text='e.g. [{"path": "amount", "op": "gt", "value": 100}]'
    )
    message = models.TextField(blank=True, help_text="Told to the client when this rule denies.")
    # How a call this rule asks about is decided; they matter only for an ask rule.
    approval_timeout_seconds = models.PositiveIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(1), MaxValueValidator(MAX_APPROVAL_TIMEOUT_SECONDS)],
        help_text="How long a call it holds waits for approvals; blank: APPROVAL_TIMEOUT_SECONDS.",
    )
    approvals_needed = models.PositiveSmallIntegerField(
        default=1,
        validators=[MinValueValidator(1), MaxValueValidator(MAX_APPROVALS_NEEDED)],
        help_text="Distinct operators who must approve a call it asks about; one denial ends the call.",
    )
    escalate_before_seconds = models.PositiveIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(1), MaxValueValidator(MAX_APPROVAL_TIMEOUT_SECONDS)],
        help_text="How long before expiry a call it holds is flagged and call.escalated sent; blank: never.",
    )
    separation_of_duties = models.CharField(
        max_length=7, choices=SeparationOfDuties.choices, default=SeparationOfDuties.INHERIT
    )
    slack_channel = slack_channel_field("Where Slack approvals post the calls it holds; blank: the server's channel.")
    enabled = models.BooleanField(default=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["position", "id"]

    def __str__(self):
        return self.name or f"rule {self.pk}: {self.action} {self.tool_glob}"
