"""The settings, configured from the environment; the console's own limits and timings are limits.py's.

With no environment set it runs embedded: SQLite, an in-memory channel layer and
celery tasks run inline. DATABASE_URL and REDIS_URL switch to PostgreSQL and Redis.
"""

import os
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from approvals.loopback import is_loopback_host
from approvals.upstream.isolation import MODES as STDIO_ISOLATION_MODES
from console.environment import (
    BASE_DIR,
    VAR_DIR,
    env_bool,
    env_list,
    private_file,
    private_var_dir,
    redis_database,
    secret,
)
from console.identity_settings import *  # noqa: F403
from console.limits import *  # noqa: F403
from console.slack_settings import *  # noqa: F403

SECRET_KEY = secret("SECRET_KEY", "secret_key")
# Keys the audit chain's links (HMAC-SHA256): kept out of the database, so that its owner cannot forge them.
AUDIT_KEY = secret("AUDIT_KEY", "audit_key")
# Signs the audit log's checkpoints (Ed25519), which anyone holding the public key can check: a PEM private key,
# or any secret text whose SHA-256 is the key's seed (approvals.audit.checkpoints).
AUDIT_SIGNING_KEY = secret("AUDIT_SIGNING_KEY", "audit_signing_key")
# Encrypts the credentials the database keeps (approvals/db/sealed.py): "new,old" while rotating.
CREDENTIALS_KEY = secret("CREDENTIALS_KEY", "credentials_key")
# Signs Web Push requests (VAPID, RFC 8292): a PEM or base64url P-256 private key, or any secret text whose SHA-256
# makes the key (approvals.push.vapid). A new key makes every browser's subscription void.
WEB_PUSH_VAPID_KEY = secret("WEB_PUSH_VAPID_KEY", "web_push_vapid_key")
# Who push services may write to about the console's pushes (VAPID's `sub`): a mailto: or https URL.
WEB_PUSH_CONTACT = os.environ.get("WEB_PUSH_CONTACT", "mailto:admin@localhost")
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
        # In a web process every request runs its ORM work in a thread of its own, so
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
    SQLITE_PATH = os.environ.get("SQLITE_PATH", str(VAR_DIR / "console.sqlite3"))
    if not SQLITE_PATH.startswith((":memory:", "file:")):
        private_file(SQLITE_PATH)
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": SQLITE_PATH,
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
    # Redis pub/sub rather than lists: one PUBLISH per event (those sent together in one round trip:
    # approvals.live.redis_layer) and no polling, so a decision reaches
    # the request waiting in another process without a poll's delay. Delivery is at most once, which the
    # console already assumes: every waiter re-reads its row now and then. Redis delivers a
    # PUBLISH to subscribers of every database, so the database number goes into the names.
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "approvals.live.redis_layer.PipelinedRedisPubSubChannelLayer",
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
# Without celery beat (embedded), each web process runs the schedule below itself.
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
    "post-due-slack-messages": {"task": "approvals.tasks.slack_post_due", "schedule": 60.0},
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

# Sessions live in the database under a hash of their key (approvals/db/sessions.py), so that a dump of it holds
# no session anyone could present, and a person's sessions can all be ended when their access or role changes.
SESSION_ENGINE = "approvals.db.sessions"
SESSION_COOKIE_AGE = int(os.environ.get("SESSION_COOKIE_AGE", 12 * 3600))
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
# The peers (addresses, networks, or * for any) whose X-Forwarded-For names the client (console/asgi.py): the
# recipe's nginx, which overwrites it. Empty, the peer is the client.
TRUSTED_PROXIES = env_list("TRUSTED_PROXIES", [])
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

# A client's metadata document on this machine is fetched only while the console answers loopback names alone,
# as on a developer's machine: anywhere else a loopback fetch would reach the console's neighbours.
OAUTH_LOOPBACK_DOCUMENTS = all(is_loopback_host(host) for host in ALLOWED_HOSTS)
