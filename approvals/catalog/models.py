"""Upstream servers and their tools, with the tools' changes; resources, templates and prompts are surface_models'."""

import shlex

from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.db import models
from django.utils import timezone
from django.utils.text import slugify

from approvals.db.sealed import SealedField
from approvals.upstream_oauth.models import Connection, OAuth

# A Slack channel by name (#approvals) or id (C0123ABCD), as chat.postMessage takes it.
SLACK_CHANNEL = RegexValidator(
    r"^#?[A-Za-z0-9][A-Za-z0-9._-]{0,79}$", "Name a Slack channel (#approvals) or give its id (C0123ABCD)."
)


def slack_channel_problem(name: str) -> str:
    try:
        SLACK_CHANNEL(name)
    except ValidationError as error:
        return error.messages[0]
    return ""


def slack_channel_field(help_text: str):
    """Where Slack approvals post the calls held under a server or a rule (approvals/slack)."""
    return models.CharField(max_length=81, blank=True, validators=[SLACK_CHANNEL], help_text=help_text)


class Server(models.Model):
    """An upstream MCP server the console connects to on its clients' behalf."""

    class Transport(models.TextChoices):
        HTTP = "http", "Streamable HTTP"
        STDIO = "stdio", "stdio subprocess"

    class Health(models.TextChoices):
        UNKNOWN = "unknown"
        OK = "ok", "Healthy"
        ERROR = "error", "Failing"
        # The server answered 401 or a refused refresh: an admin (or the person, per person) must Connect.
        NEEDS_AUTHORIZATION = "needs_authorization", "Needs authorization"

    class InputRouting(models.TextChoices):
        OPERATOR = "operator", "An operator answers in the console"
        CLIENT_IF_CAPABLE = "client_if_capable", "The client answers when it declared the capability, else an operator"

    # How the console is authorized at the server, and whose account its calls go as: upstream OAuth's.
    Connection = Connection
    OAuth = OAuth

    # Credentials: the audit log records that they changed (and which names), never their values.
    SECRET_FIELDS = ("headers", "env")

    name = models.CharField(max_length=100, unique=True)
    slug = models.SlugField(max_length=100, unique=True)
    transport = models.CharField(max_length=10, choices=Transport.choices)
    url = models.URLField(max_length=2000, blank=True)
    command = models.TextField(blank=True, help_text="Program and arguments, as a shell would split them.")
    # Upstream credentials belong to the admin: stored encrypted, never rendered back.
    headers = SealedField(default=dict, blank=True)
    env = SealedField(default=dict, blank=True)
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
        help_text="Who answers what this server asks during a call (elicitation and sampling).",
    )

    oauth = models.CharField(max_length=20, choices=OAuth.choices, default=OAuth.NONE, blank=True)
    connection = models.CharField(max_length=10, choices=Connection.choices, default=Connection.SHARED)
    # Some authorization servers refuse RFC 8707's `resource` parameter; an admin turns it off for them.
    resource_indicator = models.BooleanField(default=True)
    slack_channel = slack_channel_field("Where Slack approvals post its held calls, unless their rule names one.")

    revision = models.CharField(max_length=20, blank=True)
    server_info = models.JSONField(default=dict, blank=True)
    capabilities = models.JSONField(default=dict, blank=True)
    instructions = models.TextField(blank=True)

    health = models.CharField(max_length=20, choices=Health.choices, default=Health.UNKNOWN)
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
        # The lists' pages: a status's tools by name, across servers and on one server's page, and their counts,
        # read from an index however many tools a server lists.
        indexes = [
            models.Index(fields=["status", "exposed_name"], name="tool_status_name"),
            models.Index(fields=["server", "status", "exposed_name"], name="tool_server_status_name"),
        ]
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
