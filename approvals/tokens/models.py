"""Client tokens, the secrets they retired, and the legacy MCP sessions opened with them."""

from django.conf import settings
from django.db import models
from django.utils import timezone


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

    @property
    def person(self):
        """Whom the token acts as where a server takes each person's own connection: its owner, when the owner made
        it (on the Tokens page, or by allowing an OAuth client). A token someone else made and named them the owner
        of acts as no one there, so that no admin's token, and no token passed on, rides a person's own account."""
        if self.owner_id is None or self.owner_id != self.created_by_id:
            return None
        return self.owner

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
