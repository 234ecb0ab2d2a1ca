from django.db import models
from django.utils import timezone


class ApiKey(models.Model):
    """A person's key to the JSON API: it acts as its user, with that user's roles (only to read, when read-only),
    until revoked or past its expiry."""

    user = models.ForeignKey("auth.User", on_delete=models.CASCADE, related_name="api_keys")
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=16, help_text="The key's first characters, to recognise it.")
    key_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(default=timezone.now)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True, help_text="Refused from then on; empty: never.")
    read_only = models.BooleanField(default=False, help_text="Reads only: the API refuses it every change.")

    class Meta:
        app_label = "approvals"
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return f"API key {self.name} of {self.user_id}"
