"""demo_agent against a live console with the demo server: its rules, its token, and calls of every fate."""

import io
import threading
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from approvals.actions import servers
from approvals.calls import deciding
from approvals.calls.models import Call
from approvals.catalog import sync
from approvals.demo import COMMAND_LINE
from approvals.management.commands.seed_demo import DEMO_SERVER
from approvals.policy.models import PolicyRule
from approvals.tokens.models import ClientToken
from tests.fixtures.waiting import wait_until


@pytest.fixture
def demo(live_console, settings, tmp_path):
    settings.VAR_DIR = tmp_path
    server = servers.add_server(
        name=DEMO_SERVER,
        transport="stdio",
        command=COMMAND_LINE,
        accept_tools=True,
        schedule_sync=False,
    )
    assert sync.sync_server(server).ok
    return live_console + "/mcp"


def approve_when_pending(operator, timeout=20):
    """Approve the first held call once it has waited a moment, as an operator reading it would:
    a call decided at once is never told it waits for an operator."""

    def read_for_a_moment():
        return Call.objects.filter(
            status=Call.Status.PENDING, received_at__lte=timezone.now() - timedelta(seconds=0.5)
        ).first()

    call = wait_until(read_for_a_moment, timeout=timeout, interval=0.05, message="a call held for half a second")
    deciding.decide(call.pk, operator, True)


def run_agent(url, count):
    out = io.StringIO()
    call_command("demo_agent", url=url, count=count, pace=0.05, seed=1, stdout=out)
    return out.getvalue()


def test_it_sends_calls_that_are_allowed_held_and_denied(demo, operator):
    decider = threading.Thread(target=approve_when_pending, args=(operator,))
    decider.start()
    output = run_agent(demo, count=4)
    decider.join()

    assert "added rule 3: deny demo_records_delete_record (demo agent: no deletions)" in output
    assert "<- #1 demo_records_lookup_customer ok: Customer" in output
    assert "<- #2 demo_records_search_orders ok:" in output
    assert "#3 demo_records_quote_order: waiting for operator approval" in output
    assert "<- #3 demo_records_quote_order ok:" in output
    assert (
        "<- #4 demo_records_delete_record error: The call to demo_records_delete_record was denied by policy" in output
    )
    statuses = dict(Call.objects.values_list("tool_name", "status"))
    assert statuses["demo_records_quote_order"] == Call.Status.COMPLETED
    assert statuses["demo_records_delete_record"] == Call.Status.DENIED


def test_it_reuses_its_token_and_rules_on_the_next_run(demo):
    run_agent(demo, count=2)
    output = run_agent(demo, count=2)
    assert "added rule" not in output
    assert PolicyRule.objects.filter(name__startswith="demo agent:").count() == 4
    assert ClientToken.objects.filter(name__startswith="demo-agent").count() == 1
    assert Call.objects.filter(status=Call.Status.COMPLETED).count() == 4


def test_it_says_when_the_console_is_not_running(demo):
    with pytest.raises(CommandError, match="is the console running"):
        run_agent("http://127.0.0.1:9/mcp", count=1)
