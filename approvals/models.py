import shlex

from django.db import models
from django.utils import timezone
from django.utils.text import slugify


class Server(models.Model):
    """An upstream MCP server the console connects to on its clients' behalf."""

    class Transport(models.TextChoices):
        HTTP = "http", "Streamable HTTP"
        STDIO = "stdio", "stdio subprocess"

    class Health(models.TextChoices):
        UNKNOWN = "unknown", "Unknown"
        OK = "ok", "Healthy"
        ERROR = "error", "Failing"

    name = models.CharField(max_length=100, unique=True)
    slug = models.SlugField(max_length=100, unique=True)
    transport = models.CharField(max_length=10, choices=Transport.choices)
    url = models.URLField(max_length=2000, blank=True)
    command = models.TextField(blank=True, help_text="Program and arguments, as a shell would split them.")
    # Upstream credentials belong to the admin: stored server-side, never rendered back.
    headers = models.JSONField(default=dict, blank=True)
    env = models.JSONField(default=dict, blank=True)
    trusted = models.BooleanField(default=False, help_text="Count this server's tool annotations in policy and show them as verified.")
    enabled = models.BooleanField(default=True)
    tool_prefix = models.CharField(max_length=40, blank=True)

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
        ACTIVE = "active", "Active"
        REJECTED = "rejected", "Rejected"
        REMOVED = "removed", "Removed"

    server = models.ForeignKey(Server, on_delete=models.CASCADE, related_name="tools")
    upstream_name = models.CharField(max_length=128)
    exposed_name = models.CharField(max_length=200, db_index=True)
    definition = models.JSONField()
    digest = models.CharField(max_length=64)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ACTIVE)
    reason = models.TextField(blank=True)
    warnings = models.JSONField(default=list, blank=True)
    first_seen_at = models.DateTimeField(default=timezone.now)
    last_changed_at = models.DateTimeField(default=timezone.now)
    last_seen_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["exposed_name"]
        constraints = [
            models.UniqueConstraint(fields=["server", "upstream_name"], name="tool_unique_upstream_name"),
            # Clients address tools by exposed name alone: two active tools may never share one.
            models.UniqueConstraint(
                fields=["exposed_name"], condition=models.Q(status="active"), name="tool_unique_active_exposed_name"
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


class ToolChange(models.Model):
    """A tool's definition history: one row each time its definition or status changes."""

    class Kind(models.TextChoices):
        ADDED = "added", "Added"
        CHANGED = "changed", "Definition changed"
        REJECTED = "rejected", "Rejected"
        RESTORED = "restored", "Restored"
        REMOVED = "removed", "Removed"

    tool = models.ForeignKey(Tool, on_delete=models.CASCADE, related_name="changes")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    definition = models.JSONField()
    digest = models.CharField(max_length=64)
    previous_digest = models.CharField(max_length=64, blank=True)
    status = models.CharField(max_length=10, choices=Tool.Status.choices)
    reason = models.TextField(blank=True)
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-at", "-id"]
