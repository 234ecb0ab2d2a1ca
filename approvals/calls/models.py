"""Calls: what a client asks the console to let through, from arrival to answer, and the approvals given to each."""

from django.db import models
from django.utils import timezone

from approvals.catalog.models import Server, Tool
from approvals.policy.kinds import CallKind
from approvals.policy.models import PolicyRule
from approvals.tokens.models import ClientToken


class Call(models.Model):
    """One tools/call from a client, from arrival to its final answer.

    A permission request (kind `permission`) is a coding agent asking, through the console's own
    approval_prompt tool, whether it may run one of its own tools: `tool_name` is the agent's tool
    (Bash, Edit, ...), `arguments` its input, and there is no upstream tool or server. A resource read
    (kind `resource`) names its URI in `tool_name` (cut to fit) and whole in `arguments["uri"]`; a prompt
    get (kind `prompt`) names the prompt's exposed name, and `arguments` are the prompt's.
    """

    Kind = CallKind

    class Status(models.TextChoices):
        REJECTED = "rejected", "Rejected (invalid arguments)"
        PENDING = "pending", "Waiting for an operator"
        APPROVED = "approved"
        DENIED = "denied"
        EXPIRED = "expired"
        CANCELLED = "cancelled", "Cancelled by the client"
        FORWARDED = "forwarded", "Running upstream"
        COMPLETED = "completed"
        FAILED = "failed"

    # Cleared to run (by an operator or the policy) and short of its answer.
    IN_FLIGHT = {Status.APPROVED, Status.FORWARDED}
    # Not yet sent upstream: what retiring its server (disabled, changed, deleted) cancels.
    WAITING_TO_RUN = {Status.PENDING, Status.APPROVED}
    # Still waiting for a decision or an answer: what a client's cancellation or the end of its session stops.
    OPEN = {Status.PENDING, *IN_FLIGHT}
    FINAL = {Status.REJECTED, Status.DENIED, Status.EXPIRED, Status.CANCELLED, Status.COMPLETED, Status.FAILED}
    # Ended by something other than a decision or an answer; the reason (or error) says what.
    CUT_SHORT = {Status.REJECTED, Status.EXPIRED, Status.CANCELLED}
    # Approved or denied as asked: a read's URI and a prompt's arguments are not an operator's to change.
    AS_ASKED = {CallKind.RESOURCE, CallKind.PROMPT}

    kind = models.CharField(max_length=20, choices=CallKind.choices, default=CallKind.TOOL, db_index=True)
    token = models.ForeignKey(ClientToken, on_delete=models.PROTECT, related_name="calls")
    tool = models.ForeignKey(Tool, null=True, on_delete=models.SET_NULL, related_name="calls")
    server = models.ForeignKey(Server, null=True, on_delete=models.SET_NULL, related_name="calls")
    tool_name = models.CharField(
        max_length=200, help_text="The exposed name the client called; for a permission request, the agent's tool."
    )
    request_id = models.CharField(max_length=36, db_index=True, help_text="Correlates the audit events of this call.")
    era = models.CharField(max_length=10)
    protocol_version = models.CharField(max_length=20)
    session_id = models.CharField(max_length=64, blank=True, db_index=True)
    jsonrpc_id = models.JSONField(null=True)
    progress_token = models.JSONField(null=True, blank=True)

    arguments = models.JSONField(default=dict)
    arguments_digest = models.CharField(max_length=64)
    tool_digest = models.CharField(max_length=64, blank=True)
    edited_arguments = models.JSONField(null=True, blank=True)

    status = models.CharField(max_length=10, choices=Status.choices, db_index=True)
    policy_action = models.CharField(max_length=5, choices=PolicyRule.Action.choices, blank=True)
    rule = models.ForeignKey(PolicyRule, null=True, blank=True, on_delete=models.SET_NULL, related_name="calls")
    rule_name = models.CharField(max_length=200, blank=True)
    decided_by = models.ForeignKey("auth.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    decided_by_name = models.CharField(max_length=150, blank=True)
    reason = models.TextField(blank=True)
    # Fixed when the call is held, from the rule that asked: a later change of the rule leaves it alone.
    approvals_needed = models.PositiveSmallIntegerField(default=1)
    separation_of_duties = models.BooleanField(
        default=False, help_text="The owner of the calling token may not approve it."
    )

    result = models.JSONField(null=True, blank=True)
    is_error = models.BooleanField(default=False)
    error = models.TextField(blank=True)

    received_at = models.DateTimeField(default=timezone.now, db_index=True)
    policy_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    forwarded_at = models.DateTimeField(null=True, blank=True)
    answered_at = models.DateTimeField(null=True, blank=True)
    # The web process holding the client's request, and until when it vouches for the call: it renews the
    # lease while it holds the call, so a lapsed lease on an open call means that process died.
    holder = models.CharField(max_length=100, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    # The operator who took the pending call, so that the others see someone is on it; it decides nothing.
    claimed_by = models.ForeignKey("auth.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    claimed_by_name = models.CharField(max_length=150, blank=True)
    claimed_at = models.DateTimeField(null=True, blank=True)
    # Fixed when the call is held, from the rule's escalate_before_seconds: when it is flagged as about to expire.
    escalates_at = models.DateTimeField(null=True, blank=True)
    escalated_at = models.DateTimeField(null=True, blank=True)
    # A call the client asked to run as an MCP task: polled by its id, answered to the token that made it.
    # Unset for a call answered on the request that brought it.
    task_id = models.CharField(max_length=64, null=True, blank=True, unique=True)
    task_ttl_ms = models.PositiveIntegerField(null=True, blank=True)
    # The task its server runs it as, for a tool that requires one (upstream.tasks), and that task's last status.
    upstream_task_id = models.CharField(max_length=200, blank=True)
    upstream_task_status = models.CharField(max_length=20, blank=True)

    class Meta:
        ordering = ["-received_at", "-id"]
        permissions = [("decide_call", "Approve, edit or deny pending calls")]
        indexes = [
            # The queue and its counts: pending calls by group, oldest first. Partial, so that
            # the many ended calls weigh nothing on the live queue.
            models.Index(
                fields=["token", "tool_name", "received_at"],
                condition=models.Q(status="pending"),
                name="call_pending_queue",
            ),
        ]

    def __str__(self):
        return f"call {self.pk} {self.tool_name}"

    @property
    def ended(self) -> bool:
        return self.status in self.FINAL

    @property
    def editable(self) -> bool:
        return self.kind not in self.AS_ASKED

    @property
    def final_arguments(self):
        return self.edited_arguments if self.edited_arguments is not None else self.arguments


class CallApproval(models.Model):
    """One operator's approval of a pending call, of the arguments its binding names.

    An edit changes the binding, so approvals of the arguments before it no longer count.
    """

    call = models.ForeignKey(Call, on_delete=models.CASCADE, related_name="approvals")
    user = models.ForeignKey("auth.User", null=True, on_delete=models.SET_NULL, related_name="+")
    username = models.CharField(max_length=150)
    # The account on the console's host that gave it from the command line: one such account
    # fills one place of a quorum, whatever `--as` names it gives.
    os_user = models.CharField(max_length=150, blank=True)
    binding = models.CharField(max_length=64)
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["call", "user", "binding"], name="call_approval_once_per_operator")
        ]

    def __str__(self):
        return f"approval of call {self.call_id} by {self.username}"
