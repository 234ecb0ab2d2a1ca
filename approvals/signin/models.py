from django.db import models
from django.utils import timezone


class SsoIdentity(models.Model):
    """A person as an OpenID provider knows them (its issuer and their subject there) and the console user they are.

    The subject alone names a person: an email address or a username at the provider may change hands, so neither
    ever links a sign-in to an account that exists already.
    """

    user = models.ForeignKey("auth.User", on_delete=models.CASCADE, related_name="sso_identities")
    issuer = models.CharField(max_length=500)
    subject = models.CharField(max_length=255)
    created_at = models.DateTimeField(default=timezone.now)
    last_signed_in_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        app_label = "approvals"
        constraints = [models.UniqueConstraint(fields=["issuer", "subject"], name="sso_identity_unique")]
        verbose_name_plural = "SSO identities"

    def __str__(self):
        return f"{self.subject} at {self.issuer}"
