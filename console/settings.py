"""One settings module, configured from the environment.

With no environment set it runs embedded: SQLite, an in-memory channel layer and
celery tasks run inline. DATABASE_URL and REDIS_URL switch to PostgreSQL and Redis.
"""

import os
import secrets
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from approvals.audit.siem_transport import url_problem as forward_url_problem
from approvals.loopback import is_loopback_host
from approvals.signin.claims import parse_role_map
from approvals.upstream.isolation import MODES as STDIO_ISOLATION_MODES

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("CONSOLE_VAR_DIR", BASE_DIR / "var"))


def env_bool(name, default=False):
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name, default):
    value = os.environ.get(name)
    if not value:
        return default
    return [item.strip() for item in value.split(",") if item.strip()]


def redis_database(url: str) -> str:
    """The database number a Redis URL selects, as redis-py reads it: ?db=, else the path (not a socket's)."""
    parts = urlsplit(url)
    chosen = parse_qs(parts.query).get("db") or ([] if parts.scheme == "unix" else [parts.path.strip("/")])
    return chosen[0] if chosen and chosen[0].isdigit() else "0"


def private_var_dir():
    # Its keys, database and witness are the console's alone: a stdio server run as another user must not
    # read them, whatever the umask made of the files inside.
    VAR_DIR.mkdir(mode=0o700, parents=True, exist_ok=True)
    if VAR_DIR.stat().st_uid == os.geteuid():
        VAR_DIR.chmod(0o700)


def embedded_secret(name):
    # An embedded console keeps random keys on disk so that sessions, signed state and
    # the audit chain survive a restart; production sets each key explicitly.
    path = VAR_DIR / name
    private_var_dir()
    if not path.exists():
        path.write_text(secrets.token_urlsafe(50))
        path.chmod(0o600)
    return path.read_text().strip()


SECRET_KEY = os.environ.get("SECRET_KEY") or embedded_secret("secret_key")
# Keys the audit chain's links (HMAC-SHA256): kept out of the database, so that its owner cannot forge them.
AUDIT_KEY = os.environ.get("AUDIT_KEY") or embedded_secret("audit_key")
# Signs the audit log's checkpoints (Ed25519), which anyone holding the public key can check: a PEM private key,
# or any secret text whose SHA-256 is the key's seed (approvals.audit.checkpoints).
AUDIT_SIGNING_KEY = os.environ.get("AUDIT_SIGNING_KEY") or embedded_secret("audit_signing_key")
# Encrypts the credentials the database keeps (approvals/db/sealed.py): "new,old" while rotating.
CREDENTIALS_KEY = os.environ.get("CREDENTIALS_KEY") or embedded_secret("credentials_key")
DEBUG = env_bool("DEBUG")
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "ninja",
    "oauth2_provider",
    "approvals",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "console.health.probes",
    "console.metrics.endpoint",
    "approvals.middleware.content_security_policy",
    "approvals.middleware.refuse_nul",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "approvals.middleware.CredentialsUnreadableMiddleware",
]

ROOT_URLCONF = "console.urls"
ASGI_APPLICATION = "console.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASE_URL = os.environ.get("DATABASE_URL")
if DATABASE_URL:
    DATABASES = {"default": dj_database_url.parse(DATABASE_URL)}
    if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
        # Under daphne every request runs its ORM work in a thread of its own, so
        # persistent per-thread connections would pile up: a pool shares them.
        DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
            "min_size": 1,
            "max_size": int(os.environ.get("DATABASE_POOL_SIZE", 20)),
            "timeout": 10,
        }
    # One test database per process, so that test runs side by side keep apart.
    DATABASES["default"]["TEST"] = {"NAME": f"test_{DATABASES['default']['NAME']}_{os.getpid()}"}
else:
    private_var_dir()
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": os.environ.get("SQLITE_PATH", str(VAR_DIR / "console.sqlite3")),
            # Several writers (web, inline tasks) share one file: wait for the lock
            # rather than failing with "database is locked". WAL with synchronous=NORMAL
            # survives a crash of the console; only a power cut can lose the last
            # commits, a fair trade for the embedded mode (production is PostgreSQL).
            # A file, not memory, so that live-server tests share it with daphne's
            # threads; one per process, so that test runs side by side keep apart.
            "TEST": {"NAME": str(VAR_DIR / f"test-console-{os.getpid()}.sqlite3")},
            "OPTIONS": {
                "timeout": 20,
                "transaction_mode": "IMMEDIATE",
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            },
        }
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = os.environ.get("REDIS_URL")
if REDIS_URL:
    # Redis pub/sub rather than lists: one PUBLISH per event and no polling, so a decision reaches
    # the request waiting in another process without a poll's delay. Delivery is at most once, which the
    # console already assumes: every waiter re-reads its row now and then. Redis delivers a
    # PUBLISH to subscribers of every database, so the database number goes into the names.
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
            "CONFIG": {"hosts": [REDIS_URL], "prefix": f"console-db{redis_database(REDIS_URL)}:"},
        }
    }
    CACHES = {"default": {"BACKEND": "console.cache.SharedRedisCache", "LOCATION": REDIS_URL}}
    # The audit chain's witness (approvals.audit.witness) lives outside the database, never expiring. A Redis
    # that does not answer leaves a verification "not verified" within seconds rather than waiting on it.
    CACHES["audit_witness"] = {
        **CACHES["default"],
        "TIMEOUT": None,
        "OPTIONS": {"socket_connect_timeout": 5, "socket_timeout": 5},
    }
    CELERY_BROKER_URL = REDIS_URL
    CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER")
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "approvals.live.memory_layer.TidiedInMemoryChannelLayer"}}
    CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
        "audit_witness": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(VAR_DIR / "audit-witness"),
            "TIMEOUT": None,
        },
    }
    CELERY_BROKER_URL = "memory://"
    CELERY_TASK_ALWAYS_EAGER = True
# Sign-in throttling (approvals.signin.throttle) and the /mcp rate limits (approvals.gateway.auth) count in
# caches of their own, apart from each other and from sessions: what unknown bearer tokens on /mcp create
# cannot evict a sign-in lockout. On Redis a key prefix keeps each apart; embedded, a LocMemCache each, with
# room for far more counters than its default 300 (past which it culls a third of what it holds).
COUNTER_CACHES = {"signin": "signin", "rate_limits": "mcp-rate"}
for alias, prefix in COUNTER_CACHES.items():
    if REDIS_URL:
        CACHES[alias] = {**CACHES["default"], "KEY_PREFIX": prefix}
    else:
        CACHES[alias] = {
            "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
            "LOCATION": prefix,
            "OPTIONS": {"MAX_ENTRIES": 200_000},
        }
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_IGNORE_RESULT = True
# How often calls and input requests past their deadline, or whose process died, are ended.
STALE_CALLS_INTERVAL_SECONDS = float(os.environ.get("STALE_CALLS_INTERVAL_SECONDS", 15))
# Without celery beat (embedded), each daphne process runs the schedule below itself.
PERIODIC_WORK_IN_PROCESS = env_bool("PERIODIC_WORK_IN_PROCESS", not REDIS_URL)
# The fewest seconds between two syncs of one server that its announced list changes start.
SYNC_MIN_SECONDS = float(os.environ.get("SYNC_MIN_SECONDS", 10))
CELERY_BEAT_SCHEDULE = {
    "sync-servers": {
        "task": "approvals.tasks.sync_all_servers",
        "schedule": float(os.environ.get("SYNC_INTERVAL_SECONDS", 900)),
    },
    "expire-stale-calls": {"task": "approvals.tasks.expire_stale_calls", "schedule": STALE_CALLS_INTERVAL_SECONDS},
    "expire-stale-inputs": {"task": "approvals.tasks.expire_stale_inputs", "schedule": STALE_CALLS_INTERVAL_SECONDS},
    "prune-sessions": {"task": "approvals.tasks.prune_sessions", "schedule": 3600.0},
    "prune-oauth": {"task": "approvals.tasks.prune_oauth", "schedule": 3600.0},
    "send-due-webhooks": {"task": "approvals.tasks.send_due_webhooks", "schedule": 60.0},
    "verify-audit-chain": {
        "task": "approvals.tasks.verify_audit_chain",
        "schedule": float(os.environ.get("AUDIT_VERIFY_INTERVAL_SECONDS", 3600)),
    },
    "checkpoint-audit": {
        "task": "approvals.tasks.checkpoint_audit",
        "schedule": float(os.environ.get("AUDIT_CHECKPOINT_SECONDS", 300)),
    },
    "prune-audit": {
        "task": "approvals.tasks.prune_audit",
        "schedule": float(os.environ.get("AUDIT_PRUNE_INTERVAL_SECONDS", 86400)),
    },
    "forward-audit": {
        "task": "approvals.tasks.forward_audit",
        "schedule": float(os.environ.get("AUDIT_FORWARD_INTERVAL_SECONDS", 10)),
    },
}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT", BASE_DIR / "staticfiles"))

# Operators' sessions are read on every page and decision: from the cache (Redis in production)
# with the database behind it, so that a cache flush or a new process signs nobody out.
SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES")
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
# Behind a proxy that ends TLS and overwrites X-Forwarded-Proto (the recipe's nginx), that header says whether
# the browser's connection was HTTPS; trusted only when set, since a client could send it to any other setup.
if env_bool("SECURE_PROXY_SSL_HEADER"):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", 0))

# text (the default, for a person at a terminal) or json: one object a line, with the call's context
# (approvals.observe.logs), for whatever collects the logs of a deployment.
LOG_FORMAT = os.environ.get("LOG_FORMAT", "text").strip().lower()
if LOG_FORMAT not in {"text", "json"}:
    raise ImproperlyConfigured(f"LOG_FORMAT must be text or json, not {LOG_FORMAT!r}")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"json": {"()": "approvals.observe.logs.JsonFormatter"}},
    "handlers": {
        "console": {"class": "logging.StreamHandler", **({"formatter": "json"} if LOG_FORMAT == "json" else {})}
    },
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {"daphne": {"level": "WARNING"}, "httpx": {"level": "WARNING"}},
}

# Prometheus metrics (approvals.observe.metrics): every process of a deployment writes its own files
# into this folder, shared by them all, and /metrics adds them up. Set here, so that processes the
# console starts (a celery worker's children, commands) inherit it.
PROMETHEUS_MULTIPROC_DIR = os.environ.setdefault("PROMETHEUS_MULTIPROC_DIR", str(VAR_DIR / "metrics"))
# A scraper sends it as a bearer token; unset, only loopback clients that no proxy forwarded may scrape.
METRICS_TOKEN = os.environ.get("METRICS_TOKEN", "")

# Upstream limits: every wait and every size an upstream server controls is bounded.
UPSTREAM_TIMEOUT_SECONDS = float(os.environ.get("UPSTREAM_TIMEOUT_SECONDS", 30))
UPSTREAM_LIST_MAX_PAGES = int(os.environ.get("UPSTREAM_LIST_MAX_PAGES", 100))
UPSTREAM_LIST_MAX_BYTES = int(os.environ.get("UPSTREAM_LIST_MAX_BYTES", 8 * 1024 * 1024))


# An operator's open page checks this often that its session still lets it watch calls: a session
# that expired ends no signal, and a signal lost in transit should not leave a socket open for good.
SOCKET_ACCESS_RECHECK_SECONDS = float(os.environ.get("SOCKET_ACCESS_RECHECK_SECONDS", 300))

# The life of a call.
APPROVAL_TIMEOUT_SECONDS = float(os.environ.get("APPROVAL_TIMEOUT_SECONDS", 600))
# Whether the owner of a client token may not approve its calls, for rules that leave it to this default.
SEPARATION_OF_DUTIES = env_bool("SEPARATION_OF_DUTIES")
# A waiting call re-reads its row this often, so a lost wake-up never strands it.
CALL_REREAD_SECONDS = float(os.environ.get("CALL_REREAD_SECONDS", 5))
# A web process vouches for the calls it holds this long, renewing once half is left; a call whose
# lease lapsed lost its process and ends at the next STALE_CALLS_INTERVAL_SECONDS.
CALL_LEASE_SECONDS = float(os.environ.get("CALL_LEASE_SECONDS", 30))
if not 0 < CALL_REREAD_SECONDS < CALL_LEASE_SECONDS / 2:
    raise ImproperlyConfigured(
        "CALL_REREAD_SECONDS must be above 0 and under half of CALL_LEASE_SECONDS: leases are renewed at a re-read "
        "once half is left, so a longer interval lets them lapse and ends every held call as abandoned; "
        f"CALL_REREAD_SECONDS is {CALL_REREAD_SECONDS:g}, CALL_LEASE_SECONDS {CALL_LEASE_SECONDS:g}"
    )
UPSTREAM_CALL_TIMEOUT_SECONDS = float(os.environ.get("UPSTREAM_CALL_TIMEOUT_SECONDS", 600))
# How long what an upstream server asks for mid-call waits for its answer (an operator's form, or the
# client's). Shorter than the upstream call's own timeout, which also covers the time spent waiting.
INPUT_TIMEOUT_SECONDS = float(os.environ.get("INPUT_TIMEOUT_SECONDS", 300))
# Webhooks (approvals.webhooks): the longest wait on an endpoint, attempts per event, and the first
# retry's delay, each later one four times longer (at most an hour).
WEBHOOK_TIMEOUT_SECONDS = float(os.environ.get("WEBHOOK_TIMEOUT_SECONDS", 10))
WEBHOOK_ATTEMPTS = int(os.environ.get("WEBHOOK_ATTEMPTS", 8))
WEBHOOK_RETRY_SECONDS = float(os.environ.get("WEBHOOK_RETRY_SECONDS", 10))
# Hosts (names, addresses or CIDR networks) an endpoint may be on although they are loopback, private or
# link-local: every other such address is refused at delivery, so that webhooks cannot reach inside.
WEBHOOK_ALLOWED_HOSTS = env_list("WEBHOOK_ALLOWED_HOSTS", [])
MAX_RESULT_BYTES = int(os.environ.get("MAX_RESULT_BYTES", 4 * 1024 * 1024))

# The audit log: days events are kept (0: forever); admins may change it on the audit page.
AUDIT_RETENTION_DAYS = int(os.environ.get("AUDIT_RETENTION_DAYS", 0))
# Arguments and results live whole in the call's row; an audit event carries their digest, size and this much.
AUDIT_PREVIEW_BYTES = int(os.environ.get("AUDIT_PREVIEW_BYTES", 2048))
# Forwarding the audit log to a SIEM (approvals.audit.forwarding; docs/siem.md): where, in which form, the CA
# that signed a TLS receiver's certificate (else the system's), a HEC collector's token, the longest wait.
AUDIT_FORWARD_URL = os.environ.get("AUDIT_FORWARD_URL", "").strip()
if AUDIT_FORWARD_URL and (problem := forward_url_problem(AUDIT_FORWARD_URL)):
    raise ImproperlyConfigured(f"AUDIT_FORWARD_URL cannot be used: {problem}")
AUDIT_FORWARD_FORMAT = os.environ.get("AUDIT_FORWARD_FORMAT", "json").strip().lower()
if AUDIT_FORWARD_FORMAT not in {"json", "cef"}:
    raise ImproperlyConfigured(f"AUDIT_FORWARD_FORMAT must be json or cef, not {AUDIT_FORWARD_FORMAT!r}")
AUDIT_FORWARD_CA_FILE = os.environ.get("AUDIT_FORWARD_CA_FILE", "")
AUDIT_FORWARD_TOKEN = os.environ.get("AUDIT_FORWARD_TOKEN", "")
AUDIT_FORWARD_TIMEOUT_SECONDS = float(os.environ.get("AUDIT_FORWARD_TIMEOUT_SECONDS", 10))

# The queue page: calls a page shows, grouped by client and tool.
QUEUE_PAGE_SIZE = int(os.environ.get("QUEUE_PAGE_SIZE", 50))

# Sign-in throttling: failures counted per username and per address within the window, which is also the lockout.
SIGNIN_FAILURES_PER_USERNAME = int(os.environ.get("SIGNIN_FAILURES_PER_USERNAME", 5))
SIGNIN_FAILURES_PER_ADDRESS = int(os.environ.get("SIGNIN_FAILURES_PER_ADDRESS", 20))
SIGNIN_LOCKOUT_SECONDS = float(os.environ.get("SIGNIN_LOCKOUT_SECONDS", 900))

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

# The MCP endpoint for clients.
MCP_MAX_BODY_BYTES = int(os.environ.get("MCP_MAX_BODY_BYTES", 1024 * 1024))
# The longest URI a client may name in a read, a subscription or a completion, in UTF-8 bytes.
MAX_URI_BYTES = int(os.environ.get("MAX_URI_BYTES", 8 * 1024))
MCP_RATE_LIMIT_PER_MINUTE = int(os.environ.get("MCP_RATE_LIMIT_PER_MINUTE", 600))
MCP_TOOLS_PAGE_SIZE = int(os.environ.get("MCP_TOOLS_PAGE_SIZE", 100))
# Calls one token may have waiting for a decision at once (0: no cap); a token's own cap overrides it.
MAX_PENDING_CALLS_PER_TOKEN = int(os.environ.get("MAX_PENDING_CALLS_PER_TOKEN", 20))
# SSE streams open at once in one web process, per token and per legacy MCP session (0: no cap).
MCP_MAX_STREAMS_PER_TOKEN = int(os.environ.get("MCP_MAX_STREAMS_PER_TOKEN", 100))
MCP_MAX_STREAMS_PER_SESSION = int(os.environ.get("MCP_MAX_STREAMS_PER_SESSION", 20))
# Legacy MCP sessions open at once per token, and resource subscriptions per token across its sessions
# and listen streams (0: no cap): each is a row or an upstream subscription the token's client could pile up.
MCP_MAX_SESSIONS_PER_TOKEN = int(os.environ.get("MCP_MAX_SESSIONS_PER_TOKEN", 100))
MCP_MAX_SUBSCRIPTIONS_PER_TOKEN = int(os.environ.get("MCP_MAX_SUBSCRIPTIONS_PER_TOKEN", 1000))
# Comment lines on idle SSE streams, so that proxies and clients do not time them out.
MCP_SSE_KEEPALIVE_SECONDS = float(os.environ.get("MCP_SSE_KEEPALIVE_SECONDS", 15))
# Clients without a token then act as the "anonymous" token: acceptable only where nobody else can connect.
ALLOW_ANONYMOUS_CLIENTS = env_bool("ALLOW_ANONYMOUS_CLIENTS")
if ALLOW_ANONYMOUS_CLIENTS and not all(is_loopback_host(host) for host in ALLOWED_HOSTS):
    raise ImproperlyConfigured(
        "ALLOW_ANONYMOUS_CLIENTS=1 needs every ALLOWED_HOSTS entry to be a loopback name or address "
        f"(localhost, 127.0.0.1, [::1]); ALLOWED_HOSTS is {ALLOWED_HOSTS}"
    )

# Stdio upstream servers are someone else's code (approvals.upstream.isolation): auto runs each as STDIO_USER
# when the console may switch users and in bubblewrap when it runs here; user or bubblewrap require that layer;
# none runs them as the console's own user. Every console process is made non-dumpable whatever the mode.
STDIO_ISOLATION = os.environ.get("STDIO_ISOLATION", "auto").strip().lower()
STDIO_USER = os.environ.get("STDIO_USER", "").strip()
if STDIO_ISOLATION not in STDIO_ISOLATION_MODES:
    raise ImproperlyConfigured(
        f"STDIO_ISOLATION must be one of {', '.join(STDIO_ISOLATION_MODES)}; it is {STDIO_ISOLATION!r}"
    )

# The console's public base URL (https://console.example.com): its callback for upstream servers' OAuth and its
# Client ID Metadata Document are built from it; unset, pages use the address they were reached at, and
# connect_server needs it. OAUTH_CLIENT_METADATA_URL names where that document is published, when elsewhere.
CONSOLE_URL = os.environ.get("CONSOLE_URL", "").strip().rstrip("/")
OAUTH_CLIENT_METADATA_URL = os.environ.get("OAUTH_CLIENT_METADATA_URL", "").strip()

# The console as an OAuth 2.1 authorization server for /mcp (docs/oauth.md); static client tokens work beside it.
OAUTH_SERVER = env_bool("OAUTH_SERVER", True)
# The roles whose holders may allow a client on the consent page.
OAUTH_GRANT_ROLES = env_list("OAUTH_GRANT_ROLES", ["admin", "operator"])
# A client's metadata document on this machine is fetched only while the console answers loopback names alone,
# as on a developer's machine: anywhere else a loopback fetch would reach the console's neighbours.
OAUTH_LOOPBACK_DOCUMENTS = all(is_loopback_host(host) for host in ALLOWED_HOSTS)
# Named here because a grant (approvals.oauth) refers to the application model by this swappable setting.
OAUTH2_PROVIDER_APPLICATION_MODEL = "oauth2_provider.Application"
OAUTH2_PROVIDER = {
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
    "RESOURCE_SERVER_TOKEN_RESOURCE_VALIDATOR": "approvals.oauth.access.same_resource",
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
    "CIMD_FETCH_TIMEOUT_SECONDS": 5,
    "CIMD_MAX_DOCUMENT_SIZE": 5 * 1024,
}
