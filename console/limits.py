"""The console's own limits and timings: what bounds an upstream server, a call, a webhook, the audit log,
the queue, sign-in and the MCP endpoint. settings.py holds Django's and its libraries' settings, and these."""

import os

from django.core.exceptions import ImproperlyConfigured

from approvals.audit.siem_transport import url_problem as forward_url_problem
from console.environment import env_bool, env_list

# Upstream limits: every wait and every size an upstream server controls is bounded.
UPSTREAM_TIMEOUT_SECONDS = float(os.environ.get("UPSTREAM_TIMEOUT_SECONDS", 30))
# Hosts (names, addresses or CIDR networks) an upstream server's OAuth endpoints may be on although they are
# loopback, private or link-local, and which may use plain http: every other such endpoint is refused.
UPSTREAM_ALLOWED_HOSTS = env_list("UPSTREAM_ALLOWED_HOSTS", [])
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
# How often a client following a call as a task is asked to poll it: a person's decision takes seconds at best,
# and each poll is a query.
TASK_POLL_INTERVAL_MS = int(os.environ.get("TASK_POLL_INTERVAL_MS", 2000))
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
# Web Push (approvals.push): the longest wait on a push service, and the hosts a subscription's endpoint may be on
# although loopback or private (a push service is public and https; a listed host may use plain http).
WEB_PUSH_TIMEOUT_SECONDS = float(os.environ.get("WEB_PUSH_TIMEOUT_SECONDS", 10))
WEB_PUSH_ALLOWED_HOSTS = env_list("WEB_PUSH_ALLOWED_HOSTS", [])
MAX_RESULT_BYTES = int(os.environ.get("MAX_RESULT_BYTES", 4 * 1024 * 1024))

# The audit log: days events are kept (0: forever); admins may change it on the audit page.
AUDIT_RETENTION_DAYS = int(os.environ.get("AUDIT_RETENTION_DAYS", 0))
# Arguments and results live whole in the call's row; an audit event carries their digest, size and this much.
AUDIT_PREVIEW_BYTES = int(os.environ.get("AUDIT_PREVIEW_BYTES", 2048))
# Forwarding the audit log to a SIEM (approvals.audit.siem_forwarding; docs/siem.md): where, in which form, the CA
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
