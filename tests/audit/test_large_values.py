"""Large arguments and results are stored once, in the call row; audit events carry a digest, a size, a preview."""

import csv
import io

import pytest

from approvals.audit import verify
from approvals.audit.models import AuditEvent
from approvals.audit_log import export, filters, query
from approvals.calls import deciding, ending, lifecycle
from approvals.calls.models import Call
from approvals.protocol import revisions
from approvals.protocol.canonical import canonical_json, sha256_digest
from approvals.tokens.context import ClientContext
from tests.fixtures.catalog import make_tool

MIB = 1024 * 1024
NOTE = {"type": "object", "properties": {"text": {"type": "string"}}}


@pytest.fixture
def large_call(shop, client_token, operator):
    """A call with a ~1 MiB argument, approved, forwarded and answered with a ~1 MiB result."""
    tool = make_tool(shop, "store_note", inputSchema=NOTE)
    arguments = {"text": "é" + "x" * (MIB - 100)}
    ctx = ClientContext(client_token, revisions.MODERN, "2026-07-28")
    call, answer = lifecycle.receive_call(ctx, tool, arguments, 1, None)
    assert answer is None and call.status == Call.Status.PENDING
    edited = {"text": "y" * (MIB - 100)}
    assert deciding.decide(call.pk, operator, True, edited_arguments=edited).won
    call.refresh_from_db()
    assert ending.mark_forwarded(call)
    result = {"content": [{"type": "text", "text": "z" * MIB}]}
    ending.record_result(call, Call.Status.COMPLETED, result, "")
    call.refresh_from_db()
    return call


def stored_sizes():
    return {event.action: len(canonical_json(event.data)) for event in AuditEvent.objects.all()}


def test_it_keeps_the_whole_arguments_and_result_in_the_call_row_only(large_call, settings):
    assert len(large_call.arguments["text"]) > MIB - 100 and len(large_call.result["content"][0]["text"]) == MIB
    sizes = stored_sizes()
    assert set(sizes) >= {"call.received", "call.edited", "call.forwarded", "call.completed"}
    assert max(sizes.values()) < 2 * settings.AUDIT_PREVIEW_BYTES + 1024, sizes


def test_it_binds_each_event_to_the_stored_value_by_its_digest(large_call, settings):
    received = AuditEvent.objects.get(action="call.received").data
    assert received["arguments_digest"] == large_call.arguments_digest == sha256_digest(large_call.arguments)
    assert received["arguments_bytes"] == len(canonical_json(large_call.arguments))
    assert "arguments" not in received and received["arguments_preview"].startswith('{"text":"éxxx')
    assert len(received["arguments_preview"].encode()) <= settings.AUDIT_PREVIEW_BYTES
    forwarded = AuditEvent.objects.get(action="call.forwarded").data
    assert forwarded["arguments_digest"] == sha256_digest(large_call.edited_arguments)
    completed = AuditEvent.objects.get(action="call.completed").data["result"]
    assert completed["result_digest"] == sha256_digest(large_call.result) and completed["content_types"] == ["text"]


def test_it_keeps_a_small_value_whole_in_the_event(shop, client_token):
    tool = make_tool(shop, "store_note", inputSchema=NOTE)
    ctx = ClientContext(client_token, revisions.MODERN, "2026-07-28")
    lifecycle.receive_call(ctx, tool, {"text": "short"}, 1, None)
    received = AuditEvent.objects.get(action="call.received").data
    assert received["arguments"] == {"text": "short"} and "arguments_preview" not in received


def test_it_still_verifies_and_exports_the_chain(large_call):
    assert verify.verify_chain().ok
    rows = list(csv.reader(io.StringIO("".join(export.export_chunks(AuditEvent.objects.all(), "csv")))))
    events = [row for row in rows[1:] if not row[0].startswith("#")]
    assert rows[-1][0] == export.HEAD_MARK and len(events) == AuditEvent.objects.count()


def test_it_finds_text_of_large_arguments_beyond_the_events_preview(shop, client_token, settings):
    tool = make_tool(shop, "store_note", inputSchema=NOTE)
    ctx = ClientContext(client_token, revisions.MODERN, "2026-07-28")
    lifecycle.receive_call(ctx, tool, {"text": "x" * (2 * settings.AUDIT_PREVIEW_BYTES) + " order A-4711"}, 1, None)
    lifecycle.receive_call(ctx, tool, {"text": "x" * (2 * settings.AUDIT_PREVIEW_BYTES) + " order B-1"}, 2, None)

    def searched(text):
        form = filters.AuditFilter({"q": text})
        assert form.is_valid(), form.errors
        return list(query.filter_events(form.cleaned_data).values_list("action", "call_id"))

    assert searched("a-4711") == [("call.received", Call.objects.get(jsonrpc_id=1).pk)]
    assert searched("C-9") == []
