"""What a call's decision or end adds to the metrics and the log, once the change that made it commits."""

import contextvars
import logging

from django.db import transaction

from approvals.calls.models import Call
from approvals.observe import metrics

log = logging.getLogger(__name__)


def observed(call: Call, decided: bool):
    """The metrics and the log line of a call that was just decided (by a rule or an operator) or ended, once that
    commits."""
    if decided:
        metrics.call_decided(call.policy_action, (call.decided_at - call.received_at).total_seconds())
    if call.status in Call.FINAL:
        server = call.server.name if call.server else ""
        metrics.call_ended(server, call.status)
        if not log.isEnabledFor(logging.INFO):
            return
        fields = {"call_id": call.pk, "server": server, "tool": call.tool_name, "outcome": call.status}
        # The line names what the change's request bound (its token, its trace): its context, not the committer's.
        context = contextvars.copy_context()
        transaction.on_commit(
            lambda: context.run(log.info, "call %s %s", call.pk, call.status, extra=fields), robust=True
        )
