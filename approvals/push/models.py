from django.db import models
from django.utils import timezone


class PushDevice(models.Model):
    """A browser on which a person turned notifications on: its Push API subscription (RFC 8030's push resource,
    RFC 8291's keys), named so that the person can tell their devices apart and remove one."""

    user = models.ForeignKey("auth.User", on_delete=models.CASCADE, related_name="push_devices")
    # One browser's subscription belongs to whoever turned it on last there.
    endpoint = models.CharField(max_length=2000, unique=True)
    p256dh = models.CharField(max_length=200, help_text="The browser's P-256 public key, base64url.")
    auth = models.CharField(max_length=100, help_text="The browser's authentication secret, base64url.")
    label = models.CharField(max_length=100)
    user_agent = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    last_used_at = models.DateTimeField(null=True, blank=True, help_text="When a notification last reached it.")

    class Meta:
        app_label = "approvals"
        ordering = ["created_at", "id"]

    def __str__(self):
        return f"push device {self.label} of {self.user_id}"

    @property
    def subscription(self) -> dict:
        return {"endpoint": self.endpoint, "keys": {"p256dh": self.p256dh, "auth": self.auth}}
