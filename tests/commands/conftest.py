import io
import logging

import pytest
from django.core.management import ManagementUtility, call_command

from approvals.calls import lifecycle
from approvals.calls.models import Call
from approvals.protocol import revisions
from approvals.tokens.context import ClientContext


def run(*args, **options):
    """A command's stdout; a CommandError propagates."""
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO(), **options)
    return out.getvalue()


def from_the_shell(*args):
    """A command run as manage.py runs it, exit status and all (SystemExit).

    manage.py sets Django up, which configures logging anew: onto the stderr that the test captures and closes as
    it ends. The process's handlers are put back, or its every later line would go to that closed stream.
    """
    root = logging.getLogger()
    handlers = root.handlers[:]
    try:
        ManagementUtility(["manage.py", *args]).execute()
    finally:
        root.handlers[:] = handlers


@pytest.fixture
def pending_call(client_token, refund_tool):
    ctx = ClientContext(client_token, revisions.MODERN, "2026-07-28")
    call, answer = lifecycle.receive_call(ctx, refund_tool, {"order_id": 7, "amount": 20}, 1, None)
    assert answer is None and call.status == Call.Status.PENDING
    return call
