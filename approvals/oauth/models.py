"""What a person allowed an OAuth client: the client token it holds, and the refresh-token family that renews it."""

from django.conf import settings
from django.db import models
from django.utils import timezone
from oauth2_provider.settings import oauth2_settings


class OAuthGrant(models.Model):
    """One press of Allow that the client turned into tokens.

    The access tokens it is issued, and their rotations, share the refresh-token family; the client token
    is what every policy, limit, pending cap and audit event already knows, so revoking it ends the grant.
    """

    token = models.OneToOneField("approvals.ClientToken", on_delete=models.CASCADE, related_name="oauth_grant")
    application = models.ForeignKey(oauth2_settings.APPLICATION_MODEL, on_delete=models.CASCADE, related_name="+")
    token_family = models.UUIDField(unique=True)
    granted_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    scope = models.CharField(max_length=1000)
    resource = models.CharField(max_length=500)
    redirect_uri = models.CharField(max_length=1000, blank=True)
    granted_at = models.DateTimeField(default=timezone.now)
    refreshed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-granted_at"]

    def __str__(self):
        return f"{self.application} for {self.granted_by}"
