"""Identity at both doors: single sign-on for people, the console as an OAuth authorization server for clients,
and as an OAuth client of upstream servers. settings.py holds the rest."""

import os

from django.core.exceptions import ImproperlyConfigured

from approvals.signin.oidc_claims import parse_role_map
from console.environment import env_bool, env_list

# Single sign-on with an OpenID provider (approvals/signin/sso.py, docs/sso.md), offered while OIDC_ISSUER is set.
OIDC_ISSUER = os.environ.get("OIDC_ISSUER", "")
OIDC_CLIENT_ID = os.environ.get("OIDC_CLIENT_ID", "")
OIDC_CLIENT_SECRET = os.environ.get("OIDC_CLIENT_SECRET", "")
OIDC_ROLES_CLAIM = os.environ.get("OIDC_ROLES_CLAIM", "groups")
try:
    OIDC_ROLE_MAP = parse_role_map(os.environ.get("OIDC_ROLE_MAP", ""))
except ValueError as error:
    raise ImproperlyConfigured(str(error)) from None
# Off, the password form signs in superusers alone, at /login/local/ (break-glass); everyone else uses SSO.
LOCAL_LOGIN = env_bool("LOCAL_LOGIN", True)
AUTHENTICATION_BACKENDS = ["approvals.signin.password.PasswordBackend", "approvals.signin.sso.SsoBackend"]
# mozilla-django-oidc's own settings, by its names; the provider's endpoints come from its discovery document.
OIDC_RP_SCOPES = os.environ.get("OIDC_SCOPES", "openid email profile")
OIDC_USE_PKCE = True
OIDC_TIMEOUT = 10
OIDC_AUTHENTICATION_CALLBACK_URL = "sso_callback"

# The console's public base URL (https://console.example.com): its callback for upstream servers' OAuth and its
# Client ID Metadata Document are built from it; unset, pages use the address they were reached at, and
# connect_server needs it. OAUTH_CLIENT_METADATA_URL names where that document is published, when elsewhere.
CONSOLE_URL = os.environ.get("CONSOLE_URL", "").strip().rstrip("/")
OAUTH_CLIENT_METADATA_URL = os.environ.get("OAUTH_CLIENT_METADATA_URL", "").strip()

# The console as an OAuth 2.1 authorization server for /mcp (docs/oauth.md); static client tokens work beside it.
OAUTH_SERVER = env_bool("OAUTH_SERVER", True)
# The roles whose holders may allow a client on the consent page.
OAUTH_GRANT_ROLES = env_list("OAUTH_GRANT_ROLES", ["admin", "operator"])
# The longest life, in days, a person may give a client on the consent page; no grant lives forever.
OAUTH_GRANT_MAX_DAYS = int(os.environ.get("OAUTH_GRANT_MAX_DAYS", 90))
if OAUTH_GRANT_MAX_DAYS < 1:
    raise ImproperlyConfigured("OAUTH_GRANT_MAX_DAYS must be a whole number of days, at least 1")
# Named here because a grant (approvals.oauth) refers to the application model by this swappable setting.
OAUTH2_PROVIDER_APPLICATION_MODEL = "oauth2_provider.Application"
OAUTH2_PROVIDER = {
    "OAUTH2_SERVER_CLASS": "approvals.oauth.server.ConsoleServer",
    "OAUTH2_VALIDATOR_CLASS": "approvals.oauth.validator.ConsoleValidator",
    "SCOPES_BACKEND_CLASS": "approvals.oauth.scopes.ToolScopes",
    "PKCE_REQUIRED": True,
    "ACCESS_TOKEN_EXPIRE_SECONDS": int(os.environ.get("OAUTH_ACCESS_TOKEN_SECONDS", 3600)),
    "AUTHORIZATION_CODE_EXPIRE_SECONDS": 60,
    "ROTATE_REFRESH_TOKEN": True,
    "REFRESH_TOKEN_REUSE_PROTECTION": True,
    "REQUEST_APPROVAL_PROMPT": "force",
    "OAUTH2_RESPONSE_TYPES_SUPPORTED": ["code"],
    "OAUTH2_GRANT_TYPES_SUPPORTED": ["authorization_code", "refresh_token"],
    "OAUTH2_TOKEN_ENDPOINT_AUTH_METHODS_SUPPORTED": ["none", "client_secret_basic", "client_secret_post"],
    "RESOURCE_SERVER_TOKEN_RESOURCE_VALIDATOR": "approvals.oauth.access_tokens.same_resource",
    "COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PASSWORD_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,
    "COMPLIANT_BCP_RFC9700_ACCESS_TOKEN_TRANSPORT": True,
    "COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS": True,
    "COMPLIANT_BCP_RFC9700_TOKEN_STORAGE": True,
    "DCR_ENABLED": OAUTH_SERVER,
    "DCR_REGISTRATION_PERMISSION_CLASSES": ("oauth2_provider.dcr.AllowAllDCRPermission",),
    "CIMD_ENABLED": OAUTH_SERVER,
    "CIMD_METADATA_FETCHER": "approvals.oauth.documents.ConsoleFetcher",
    "CIMD_REGISTRATION_PERMISSION_CLASSES": ("approvals.oauth.documents.SentToAuthorize",),
    "CIMD_FETCH_TIMEOUT_SECONDS": 5,
    "CIMD_MAX_DOCUMENT_SIZE": 5 * 1024,
}
