"""Held resource reads and prompt gets in the queue and on their page: shown by URI, or by prompt and arguments."""

import pytest
from django.urls import reverse

from approvals import roles
from approvals.audit.models import AuditEvent
from approvals.calls import deciding, ending, reads
from approvals.calls.models import Call
from approvals.policy import rules
from approvals.protocol import revisions
from approvals.tokens.context import ClientContext
from tests.fixtures.catalog import make_server

HOSTILE = '<img src=x onerror=alert(1)><script>alert("pwned")</script>'


@pytest.fixture
def ask(client_token):
    """Hold a read of `kind` on the Records server, as the gateway records one an ask rule names."""
    server = make_server()
    rules.create_rule(rules.RuleRequest("ask", applies_to="resource", name="reads asked"))
    rules.create_rule(rules.RuleRequest("ask", applies_to="prompt", name="prompts asked"))

    def pending(kind, name, arguments):
        ctx = ClientContext(client_token, revisions.MODERN, "2026-07-28")
        call, answer = reads.receive_read(ctx, reads.Read(kind, server, name, arguments, "d" * 64, jsonrpc_id=1))
        assert answer is None and call.status == Call.Status.PENDING
        return call

    return pending


@pytest.fixture
def operator(person):
    return person("ann", roles.OPERATOR)


def test_it_shows_a_held_read_by_its_uri_without_an_edit(ask, operator):
    call = ask("resource", f"file://docs/{HOSTILE}", {"uri": f"file://docs/{HOSTILE}"})
    _, client = operator

    queue = client.get(reverse("queue")).content.decode()
    page = client.get(reverse("call", args=[call.pk])).content.decode()

    assert '<span class="badge" data-kind>resource read</span>' in queue
    assert '<code class="wrap" data-uri>file://docs/&lt;img src=x' in queue and "<script>alert" not in queue
    assert "Edit then approve" not in queue and "changed or it was removed" not in queue
    assert "Read of <code>file://docs/&lt;img" in page and "resource read" in page


def test_it_shows_a_held_prompt_with_its_arguments(ask, operator):
    ask("prompt", "records_summarise", {"topic": "refunds in March"})
    _, client = operator

    queue = client.get(reverse("queue")).content.decode()

    assert '<span class="badge" data-kind>prompt</span> <code>records_summarise</code>' in queue
    assert "refunds in March" in queue


def test_it_refuses_to_edit_a_read_and_approves_it_as_asked(ask, operator):
    call = ask("resource", "file://docs/a.md", {"uri": "file://docs/a.md"})
    user, client = operator

    edit = client.get(reverse("call_edit", args=[call.pk]), follow=True)
    refused = deciding.decide(call.pk, user, True, edited_arguments={"uri": "file://etc/passwd"})
    approved = deciding.decide(call.pk, user, True)

    assert "cannot be edited" in edit.content.decode()
    assert not refused.won and "cannot be edited" in refused.message
    assert approved.won and approved.row.status == Call.Status.APPROVED
    assert approved.row.final_arguments == {"uri": "file://docs/a.md"}
    assert not AuditEvent.objects.filter(action="call.edited").exists()


def test_it_shows_a_completed_reads_page_with_the_contents_it_returned(ask, operator):
    call = ask("resource", "file://docs/a.md", {"uri": "file://docs/a.md"})
    user, client = operator
    deciding.decide(call.pk, user, True)
    call.refresh_from_db()
    ending.mark_forwarded(call)
    contents = {"contents": [{"uri": "file://docs/a.md", "mimeType": "text/markdown", "text": "# Guide to refunds"}]}
    ending.record_result(call, Call.Status.COMPLETED, contents, "")

    response = client.get(reverse("call", args=[call.pk]))

    assert response.status_code == 200
    page = response.content.decode()
    assert "# Guide to refunds" in page and "Approved by ann" in page
