"""The console as an OAuth client of upstream servers: its registration, the tokens it holds, the flows under way.

Every secret here (client secrets, private keys, tokens, PKCE verifiers) is a SealedField: encrypted under
CREDENTIALS_KEY, so a dump of the database alone holds none of them.
"""

from django.apps import apps
from django.conf import settings
from django.db import models
from django.utils import timezone

from approvals.db.sealed import SealedField

URL_LENGTH = 2000
# The catalog sits a layer above this package (its sync and specs ask for a server's bearer), so this package
# names the Server as its foreign keys do, by app label and model name, and never imports it.
SERVER = "approvals.Server"


def server_model():
    """The catalog's Server model, for the few queries this package makes on servers."""
    return apps.get_model(SERVER)


class OAuth(models.TextChoices):
    """How the console is authorized at a server (Server.oauth)."""

    NONE = "", "No OAuth (static headers, if any)"
    AUTHORIZATION_CODE = "authorization_code", "OAuth with a person's consent (Connect)"
    CLIENT_CREDENTIALS = "client_credentials", "OAuth client credentials (machine to machine)"


class Connection(models.TextChoices):
    """Whose account a server's calls go upstream as (Server.connection)."""

    SHARED = "shared", "One connection, made by an admin, for every caller"
    PER_PERSON = "per_person", "Each caller connects their own account"


class UpstreamClient(models.Model):
    """How the console is known to one server's authorization server, and what discovery found there."""

    class Registration(models.TextChoices):
        NONE = "", "Not registered yet"
        CIMD = "cimd", "Client ID Metadata Document"
        DCR = "dcr", "Dynamic client registration"
        PREREGISTERED = "preregistered", "Credentials an admin entered"

    class AuthMethod(models.TextChoices):
        BASIC = "client_secret_basic"
        POST = "client_secret_post"
        NONE = "none"
        PRIVATE_KEY_JWT = "private_key_jwt"

    server = models.OneToOneField(SERVER, on_delete=models.CASCADE, related_name="oauth_client")
    registration = models.CharField(max_length=20, choices=Registration.choices, blank=True)
    client_id = models.CharField(max_length=URL_LENGTH, blank=True)
    client_secret = SealedField(null=True, blank=True)
    private_key = SealedField(null=True, blank=True)  # PEM, for private_key_jwt (RFC 7523)
    token_auth_method = models.CharField(max_length=30, choices=AuthMethod.choices, blank=True)
    signing_algorithm = models.CharField(max_length=10, blank=True)
    redirect_uri = models.CharField(max_length=URL_LENGTH, blank=True)

    issuer = models.CharField(max_length=URL_LENGTH, blank=True)
    authorization_endpoint = models.CharField(max_length=URL_LENGTH, blank=True)
    token_endpoint = models.CharField(max_length=URL_LENGTH, blank=True)
    registration_endpoint = models.CharField(max_length=URL_LENGTH, blank=True)
    resource = models.CharField(max_length=URL_LENGTH, blank=True)
    resource_metadata_url = models.CharField(max_length=URL_LENGTH, blank=True)
    scopes_supported = models.JSONField(default=list, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    discovered_at = models.DateTimeField(null=True, blank=True)
    # An admin's fixed scope; blank leaves the choice to the spec's order (the 401's, the server's, none).
    scope = models.CharField(max_length=1000, blank=True)

    def __str__(self):
        return f"OAuth client of {self.server}"


class UpstreamGrant(models.Model):
    """The tokens of one connection to a server: the shared one (user NULL) or one person's."""

    class Status(models.TextChoices):
        CONNECTED = "connected"
        NEEDS_AUTHORIZATION = "needs_authorization", "Needs authorization"

    server = models.ForeignKey(SERVER, on_delete=models.CASCADE, related_name="oauth_grants")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="upstream_grants"
    )
    access_token = SealedField(null=True, blank=True)
    refresh_token = SealedField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    scope = models.CharField(max_length=1000, blank=True)
    wanted_scope = models.CharField(max_length=1000, blank=True)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.NEEDS_AUTHORIZATION)
    reason = models.TextField(blank=True)
    # Step-up authorizations in a row that did not end the server's refusals: the retry limit counts them.
    step_ups = models.PositiveSmallIntegerField(default=0)
    connected_at = models.DateTimeField(null=True, blank=True)
    refreshed_at = models.DateTimeField(null=True, blank=True)
    # The claim of the one process renewing the token, until when it holds: the token request is sent outside
    # any transaction, and a rotating refresh token must not be spent twice (server_tokens.renewed).
    refresh_claim = models.CharField(max_length=32, blank=True)
    refreshing_until = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["server"], condition=models.Q(user__isnull=True), name="upstream_grant_one_shared"
            ),
            models.UniqueConstraint(
                fields=["server", "user"], condition=models.Q(user__isnull=False), name="upstream_grant_one_per_user"
            ),
        ]

    def __str__(self):
        return f"{self.server} ({self.user or 'shared'}): {self.status}"

    @property
    def connected(self) -> bool:
        return self.status == self.Status.CONNECTED and bool(self.access_token)


class UpstreamAuthorization(models.Model):
    """One browser's trip to an authorization server and back: single use, short-lived."""

    state_digest = models.CharField(max_length=64, unique=True)
    server = models.ForeignKey(SERVER, on_delete=models.CASCADE, related_name="oauth_authorizations")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    started_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    code_verifier = SealedField()
    redirect_uri = models.CharField(max_length=URL_LENGTH)
    scope = models.CharField(max_length=1000, blank=True)
    resource = models.CharField(max_length=URL_LENGTH, blank=True)
    issuer = models.CharField(max_length=URL_LENGTH, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    outcome = models.TextField(blank=True)  # "connected", or why not

    CONNECTED = "connected"
    EXCHANGING = "exchanging"  # the code is being exchanged: the flow is spent, its end not yet known

    def __str__(self):
        return f"authorization of {self.server} started {self.created_at:%Y-%m-%d %H:%M}"
