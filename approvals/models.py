import shlex
import uuid

from django.conf import settings
from django.contrib.contenttypes.fields import GenericForeignKey, GenericRelation
from django.contrib.contenttypes.models import ContentType
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils import timezone
from django.utils.text import slugify

# Django shows a choice given no label as its name in title case; only the labels that say more are written out.


class Server(models.Model):
    """An upstream MCP server the console connects to on its clients' behalf."""

    class Transport(models.TextChoices):
        HTTP = "http", "Streamable HTTP"
        STDIO = "stdio", "stdio subprocess"

    class Health(models.TextChoices):
        UNKNOWN = "unknown"
        OK = "ok", "Healthy"
        ERROR = "error", "Failing"

    class InputRouting(models.TextChoices):
        OPERATOR = "operator", "An operator answers in the console"
        CLIENT_IF_CAPABLE = "client_if_capable", "The client answers when it declared the capability, else an operator"

    # Credentials: the audit log records that they changed (and which names), never their values.
    SECRET_FIELDS = ("headers", "env")

    name = models.CharField(max_length=100, unique=True)
    slug = models.SlugField(max_length=100, unique=True)
    transport = models.CharField(max_length=10, choices=Transport.choices)
    url = models.URLField(max_length=2000, blank=True)
    command = models.TextField(blank=True, help_text="Program and arguments, as a shell would split them.")
    # Upstream credentials belong to the admin: stored server-side, never rendered back.
    headers = models.JSONField(default=dict, blank=True)
    env = models.JSONField(default=dict, blank=True)
    trusted = models.BooleanField(
        default=False, help_text="Count this server's tool annotations in policy and show them as verified."
    )
    enabled = models.BooleanField(default=True)
    tool_prefix = models.CharField(max_length=40, blank=True)

    class Changes(models.TextChoices):
        REVIEW = "review", "An admin reviews each new or changed tool before clients see it"
        ACCEPT = "accept", "Accept new and changed tools at once (servers the organisation builds itself)"

    changes = models.CharField(
        max_length=10,
        choices=Changes.choices,
        default=Changes.REVIEW,
        help_text="What happens when a tool of this server is added or its definition changes.",
    )
    # Set when an admin accepts a new server's tools as they add it: the next listing is accepted whole.
    accept_next_listing = models.BooleanField(default=False)
    input_routing = models.CharField(
        max_length=20,
        choices=InputRouting.choices,
        default=InputRouting.OPERATOR,
        help_text="Who answers what this server asks during a call (elicitation).",
    )

    revision = models.CharField(max_length=20, blank=True)
    server_info = models.JSONField(default=dict, blank=True)
    capabilities = models.JSONField(default=dict, blank=True)
    instructions = models.TextField(blank=True)

    health = models.CharField(max_length=10, choices=Health.choices, default=Health.UNKNOWN)
    last_error = models.TextField(blank=True)
    last_sync_at = models.DateTimeField(null=True, blank=True)
    last_checked_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name

    def save(self, *args, **kwargs):
        if not self.slug:
            self.slug = self.unique_slug(self.name)
        super().save(*args, **kwargs)

    @classmethod
    def unique_slug(cls, name):
        base = slugify(name).replace("-", "_")[:90] or "server"
        slug, n = base, 1
        while cls.objects.filter(slug=slug).exists():
            n += 1
            slug = f"{base}_{n}"
        return slug

    @staticmethod
    def default_prefix(slug):
        return f"{slug}_"

    @property
    def endpoint(self):
        return self.url if self.transport == self.Transport.HTTP else self.command

    def command_argv(self):
        return shlex.split(self.command)

    def active_tools(self):
        return self.tools.filter(status=Tool.Status.ACTIVE)


class Tool(models.Model):
    """One tool of one upstream server, as last seen in its tools/list."""

    class Status(models.TextChoices):
        ACTIVE = "active"
        NEEDS_REVIEW = "needs_review", "Needs review"
        DECLINED = "declined", "Rejected in review"
        REJECTED = "rejected"
        REMOVED = "removed"

    # The statuses that keep a tool's exposed name: a tool awaiting review must find its name free when accepted.
    HELD = [Status.ACTIVE, Status.NEEDS_REVIEW, Status.DECLINED]

    server = models.ForeignKey(Server, on_delete=models.CASCADE, related_name="tools")
    upstream_name = models.CharField(max_length=128)
    exposed_name = models.CharField(max_length=200, db_index=True)
    definition = models.JSONField()
    digest = models.CharField(max_length=64)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.ACTIVE)
    reason = models.TextField(blank=True)
    warnings = models.JSONField(default=list, blank=True)
    # The definition an admin accepted (or the server's setting accepted); an active tool is listed exactly as this.
    reviewed_digest = models.CharField(max_length=64, blank=True)
    reviewed_definition = models.JSONField(null=True, blank=True)
    first_seen_at = models.DateTimeField(default=timezone.now)
    last_changed_at = models.DateTimeField(default=timezone.now)
    last_seen_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["exposed_name"]
        constraints = [
            models.UniqueConstraint(fields=["server", "upstream_name"], name="tool_unique_upstream_name"),
            # Clients address tools by exposed name alone: two tools that hold a name may never share one.
            models.UniqueConstraint(
                fields=["exposed_name"],
                condition=models.Q(status__in=["active", "needs_review", "declined"]),
                name="tool_unique_held_exposed_name",
            ),
        ]

    def __str__(self):
        return self.exposed_name

    @property
    def title(self):
        return self.definition.get("title") or (self.definition.get("annotations") or {}).get("title") or ""

    @property
    def description(self):
        return self.definition.get("description") or ""

    @property
    def served(self) -> bool:
        return self.status == self.Status.ACTIVE


class Change(models.Model):
    """One row each time a definition or a status changes: a catalog entry's history."""

    class Kind(models.TextChoices):
        ADDED = "added"
        CHANGED = "changed", "Definition changed"
        REJECTED = "rejected"
        RESTORED = "restored"
        REMOVED = "removed"
        ACCEPTED = "accepted", "Accepted in review"
        DECLINED = "declined", "Rejected in review"

    kind = models.CharField(max_length=10, choices=Kind.choices)
    definition = models.JSONField()
    digest = models.CharField(max_length=64)
    previous_digest = models.CharField(max_length=64, blank=True)
    status = models.CharField(max_length=20, choices=Tool.Status.choices)
    reason = models.TextField(blank=True)
    actor_name = models.CharField(max_length=150, blank=True, help_text="Who accepted or rejected it, for a review.")
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        abstract = True
        ordering = ["-at", "-id"]


class ToolChange(Change):
    """A tool's definition history."""

    tool = models.ForeignKey(Tool, on_delete=models.CASCADE, related_name="changes")


class SurfaceChange(Change):
    """The history of a resource, a resource template or a prompt."""

    item_type = models.ForeignKey(ContentType, on_delete=models.CASCADE, related_name="+")
    item_id = models.PositiveBigIntegerField()
    item = GenericForeignKey("item_type", "item_id")

    class Meta(Change.Meta):
        indexes = [models.Index(fields=["item_type", "item_id"], name="surfacechange_item")]


class SurfaceItem(models.Model):
    """What a server offers besides tools, as last listed: a resource, a resource template or a prompt.

    Clients reach a resource by its URI and a prompt by its exposed name, so each
    kind keeps one field (`ROUTED_BY`) that no two active rows may share.
    """

    # Reviewed as tools are, under the server's setting (catalog.trust): the same statuses, the same history.
    Status = Tool.Status
    HELD = Tool.HELD
    # What clients are served: an active entry, and one whose change awaits review, as it was accepted.
    SERVED = models.Q(status="active") | models.Q(status="needs_review", reviewed_definition__isnull=False)

    server = models.ForeignKey(Server, on_delete=models.CASCADE, related_name="%(class)ss")
    upstream_name = models.CharField(max_length=200)
    exposed_name = models.CharField(max_length=300)
    definition = models.JSONField()
    digest = models.CharField(max_length=64)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.ACTIVE)
    reason = models.TextField(blank=True)
    # As a tool's: the definition accepted; while a change awaits review, clients are served this one.
    reviewed_digest = models.CharField(max_length=64, blank=True)
    reviewed_definition = models.JSONField(null=True, blank=True)
    changes = GenericRelation("SurfaceChange", content_type_field="item_type", object_id_field="item_id")
    first_seen_at = models.DateTimeField(default=timezone.now)
    last_changed_at = models.DateTimeField(default=timezone.now)
    last_seen_at = models.DateTimeField(default=timezone.now)

    class Meta:
        abstract = True

    def __str__(self):
        return self.exposed_name

    @property
    def title(self):
        return self.definition.get("title") or ""

    @property
    def description(self):
        return self.definition.get("description") or ""

    @property
    def change_waits(self) -> bool:
        """A definition was accepted, and a change to it awaits review."""
        return self.status == self.Status.NEEDS_REVIEW and self.reviewed_definition is not None

    @property
    def served(self) -> bool:
        return self.status == self.Status.ACTIVE or self.change_waits

    @property
    def served_definition(self) -> dict:
        """What clients are given: the accepted definition while a change to it awaits review."""
        return self.reviewed_definition if self.change_waits else self.definition

    @property
    def served_digest(self) -> str:
        return self.reviewed_digest if self.change_waits else self.digest


# The statuses that hold a route, as a tool's HELD hold its name: an entry awaiting review finds it free when accepted.
HELD_STATUSES = ["active", "needs_review", "declined"]


class UriItem(SurfaceItem):
    """An entry reached by URI: a resource by its own, a template by those it matches (`uri` holds the template)."""

    ROUTED_BY = "uri"
    uri = models.CharField(max_length=2000)

    class Meta:
        abstract = True
        ordering = ["uri"]
        constraints = [
            models.UniqueConstraint(fields=["server", "uri"], name="%(class)s_unique_uri_per_server"),
            models.UniqueConstraint(
                fields=["uri"], condition=models.Q(status__in=HELD_STATUSES), name="%(class)s_unique_held_uri"
            ),
        ]


class Resource(UriItem):
    """One resource of one server; its URI, kept as the server gives it, routes resources/read."""


class ResourceTemplate(UriItem):
    """One resource template of one server; a URI it matches, when no resource has it, reads from that server."""


class Prompt(SurfaceItem):
    """One prompt of one server, addressed by clients by its exposed name."""

    ROUTED_BY = "exposed_name"

    class Meta:
        ordering = ["exposed_name"]
        constraints = [
            models.UniqueConstraint(fields=["server", "upstream_name"], name="prompt_unique_upstream_name"),
            models.UniqueConstraint(
                fields=["exposed_name"],
                condition=models.Q(status__in=HELD_STATUSES),
                name="prompt_unique_held_exposed_name",
            ),
        ]

    @property
    def arguments(self) -> list[dict]:
        return [a for a in self.served_definition.get("arguments") or [] if isinstance(a, dict)]


class ClientToken(models.Model):
    """A downstream client's credential: shown once, stored as a SHA-256 hash."""

    ANONYMOUS = "anonymous"

    name = models.CharField(max_length=100, unique=True)
    prefix = models.CharField(max_length=16, blank=True, help_text="The token's first characters, to recognise it.")
    token_hash = models.CharField(max_length=64, unique=True, null=True, blank=True)
    tool_globs = models.JSONField(
        default=list, blank=True, help_text='Exposed tool names this token may use; ["*"] for all.'
    )
    created_by = models.ForeignKey("auth.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="client_tokens"
    )
    description = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField(null=True, blank=True, help_text="From then on the gateway refuses the token.")
    rate_per_minute = models.PositiveIntegerField(
        null=True, blank=True, help_text="Requests a minute; blank takes MCP_RATE_LIMIT_PER_MINUTE."
    )
    max_pending_calls = models.PositiveIntegerField(
        null=True, blank=True, help_text="Calls awaiting a decision at once; 0 for no cap, blank takes the global cap."
    )
    last_used_at = models.DateTimeField(null=True, blank=True)
    last_used_from = models.CharField(max_length=100, blank=True, help_text="The client's address as last seen.")
    rotated_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["name"]
        permissions = [("manage_tokens", "Create, change, rotate and revoke client tokens")]

    def __str__(self):
        return self.name

    @property
    def revoked(self):
        return self.revoked_at is not None

    def expired(self, now=None) -> bool:
        return self.expires_at is not None and self.expires_at <= (now or timezone.now())


class RetiredSecret(models.Model):
    """A client token's secret that a rotation replaced: valid until the grace period ends, then named when refused."""

    token = models.ForeignKey(ClientToken, on_delete=models.CASCADE, related_name="retired_secrets")
    token_hash = models.CharField(max_length=64, unique=True)
    prefix = models.CharField(max_length=16, blank=True)
    retired_at = models.DateTimeField(default=timezone.now)
    valid_until = models.DateTimeField()

    class Meta:
        ordering = ["-retired_at"]


class McpSession(models.Model):
    """A legacy-era client session; kept in the database so any web process can serve it."""

    id = models.CharField(max_length=64, primary_key=True)
    token = models.ForeignKey(ClientToken, on_delete=models.CASCADE, related_name="sessions")
    protocol_version = models.CharField(max_length=20)
    client_info = models.JSONField(default=dict, blank=True)
    client_capabilities = models.JSONField(default=dict, blank=True)
    initialized = models.BooleanField(default=False)
    log_level = models.CharField(
        max_length=10, blank=True, help_text="Set by logging/setLevel; log messages below it are not relayed."
    )
    resource_subscriptions = models.JSONField(
        default=list, blank=True, help_text="The resource URIs the client subscribed to (resources/subscribe)."
    )
    created_at = models.DateTimeField(default=timezone.now)
    last_seen_at = models.DateTimeField(default=timezone.now)
    closed_at = models.DateTimeField(null=True, blank=True)


class CallKind(models.TextChoices):
    """What a client asks the console to let through: a tool call, a coding agent's permission request,
    a resource read or a prompt get.

    Each kind is a Call, so holding, quorum, separation of duties, audit and the queue apply to all;
    a rule applies to one kind.
    """

    TOOL = "tool", "Tool calls"
    PERMISSION = "permission", "Permission requests from coding agents"
    RESOURCE = "resource", "Resource reads"
    PROMPT = "prompt", "Prompt gets"


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
    separation_of_duties = models.CharField(
        max_length=7, choices=SeparationOfDuties.choices, default=SeparationOfDuties.INHERIT
    )
    enabled = models.BooleanField(default=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["position", "id"]

    def __str__(self):
        return self.name or f"rule {self.pk}: {self.action} {self.tool_glob}"


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
    binding = models.CharField(max_length=64)
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["call", "user", "binding"], name="call_approval_once_per_operator")
        ]

    def __str__(self):
        return f"approval of call {self.call_id} by {self.username}"


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

    call = models.ForeignKey(Call, on_delete=models.CASCADE, related_name="input_requests")
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


# The audit log's, the API's and the webhooks' models live beside them; imported here so Django and callers find them
# in one place.
from approvals.api.models import ApiKey  # noqa: E402,F401
from approvals.audit.models import AuditEvent, AuditHead, AuditSettings, AuditVerification  # noqa: E402,F401
from approvals.webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint  # noqa: E402,F401
