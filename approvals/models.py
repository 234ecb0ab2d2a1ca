"""The console's models, each beside the code of its concern, imported here so that Django and callers find them
in one place.

Django shows a choice given no label as its name in title case; only the labels that say more are written out.
"""

from approvals.api.models import ApiKey  # noqa: F401
from approvals.audit.models import AuditEvent, AuditHead, AuditSettings, AuditVerification  # noqa: F401
from approvals.calls.kinds import CallKind  # noqa: F401
from approvals.calls.models import Call, CallApproval  # noqa: F401
from approvals.catalog.models import (  # noqa: F401
    HELD_STATUSES,
    Change,
    Prompt,
    Resource,
    ResourceTemplate,
    Server,
    SurfaceChange,
    SurfaceItem,
    Tool,
    ToolChange,
    UriItem,
)
from approvals.inputs.models import InputRequest  # noqa: F401
from approvals.policy.models import PolicyRule  # noqa: F401
from approvals.tokens.models import ClientToken, McpSession, RetiredSecret  # noqa: F401
from approvals.webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint  # noqa: F401
