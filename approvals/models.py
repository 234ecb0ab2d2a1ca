"""Django's registry of the console's models: importing this module loads every package's models.py.

Each model lives beside the code of its concern, and code imports it from there
(`from approvals.calls.models import Call`), never from here: ruff's banned-api says so.

Django shows a choice given no label as its name in title case; only the labels that say more are written out.
"""

from approvals.api.models import ApiKey  # noqa: F401
from approvals.audit.models import (  # noqa: F401
    AuditCheckpoint,
    AuditEvent,
    AuditForwardCursor,
    AuditHead,
    AuditSettings,
    AuditVerification,
)
from approvals.calls.models import Call, CallApproval  # noqa: F401
from approvals.catalog.models import Server, Tool, ToolChange  # noqa: F401
from approvals.catalog.surface_models import Prompt, Resource, ResourceTemplate, SurfaceChange  # noqa: F401
from approvals.db.models import LookupStamp  # noqa: F401
from approvals.inputs.models import InputRequest  # noqa: F401
from approvals.oauth.models import OAuthGrant, RoleScope  # noqa: F401
from approvals.policy.models import PolicyRule  # noqa: F401
from approvals.push.models import PushDevice  # noqa: F401
from approvals.signin.models import SsoIdentity  # noqa: F401
from approvals.slack.models import SlackLink, SlackMessage  # noqa: F401
from approvals.tokens.models import ClientToken, McpSession, RetiredSecret  # noqa: F401
from approvals.upstream_oauth.models import UpstreamAuthorization, UpstreamClient, UpstreamGrant  # noqa: F401
from approvals.webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint  # noqa: F401
