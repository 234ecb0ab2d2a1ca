import io

import pytest
from django.core.management import call_command

from approvals.calls import lifecycle
from approvals.calls.models import Call
from approvals.protocol import revisions
from approvals.tokens.context import ClientContext


def run(*args, **options):
    """A command's stdout; a CommandError propagates."""
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO(), **options)
    return out.getvalue()


@pytest.fixture
def pending_call(client_token, refund_tool):
    ctx = ClientContext(client_token, revisions.MODERN, "2026-07-28")
    call, answer = lifecycle.receive_call(ctx, refund_tool, {"order_id": 7, "amount": 20}, 1, None)
    assert answer is None and call.status == Call.Status.PENDING
    return call
