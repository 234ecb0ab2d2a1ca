"""What a person allowed an OAuth client: the client token it holds, and the refresh-token family that renews it;
and what each role may allow."""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.utils import timezone
from oauth2_provider.settings import oauth2_settings

from approvals import roles
from approvals.tokens import issuing


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


class RoleScope(models.Model):
    """What holders of a role may let an OAuth client use, as a client token's tool patterns, set by an admin in
    Django's admin; also what a client that asks for nothing gets. A role with no row grants what it may make on
    the Tokens page: admins every tool, the other roles nothing."""

    role = models.CharField(max_length=20, unique=True, choices=[(role, role) for role in roles.ROLES])
    tool_globs = models.JSONField(
        default=list, help_text='Tool patterns, e.g. ["github_*", "crm_lookup"]; [] grants none.'
    )

    class Meta:
        ordering = ["role"]

    def __str__(self):
        return f"{self.role}: {' '.join(self.tool_globs) or 'no tools'}"

    def clean(self):
        if not isinstance(self.tool_globs, list) or not all(isinstance(glob, str) for glob in self.tool_globs):
            raise ValidationError({"tool_globs": "a list of tool patterns"})
        if self.tool_globs and (problems := issuing.glob_problems(self.tool_globs)):
            raise ValidationError({"tool_globs": problems})
