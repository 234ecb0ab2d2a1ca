"""A call's page: the timeline with durations, both versions of edited arguments, and the result by content type."""

import base64
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from approvals import roles
from approvals.calls import deciding
from approvals.calls.models import Call
from approvals.inputs.models import InputRequest
from tests.fixtures.catalog import make_tool

PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=")
QUOTE = {
    "name": "quote",
    "title": "Price an order",
    "inputSchema": {"type": "object", "properties": {"order_id": {"type": "string"}}},
    "outputSchema": {"type": "object", "properties": {"total": {"type": "number", "title": "Total due"}}},
}


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


RESULT = {
    "content": [
        {"type": "text", "text": "Priced <b>order</b> O1012."},
        {"type": "image", "data": b64(PNG), "mimeType": "image/png"},
        {"type": "audio", "data": b64(b"RIFF....WAVE"), "mimeType": "audio/wav"},
        {"type": "resource_link", "uri": "https://shop.example/orders/O1012", "name": "order", "title": "The order"},
        {"type": "resource_link", "uri": "javascript:alert(1)", "name": "trap"},
        {
            "type": "resource",
            "resource": {"uri": "file:///notes.txt", "mimeType": "text/plain", "text": "Ship before Friday."},
        },
        {
            "type": "resource",
            "resource": {"uri": "file:///invoice.pdf", "mimeType": "application/pdf", "blob": b64(b"%PDF-1.7")},
        },
        {"type": "image", "data": b64(b"<svg onload=alert(1)>"), "mimeType": "image/svg+xml"},
    ],
    "structuredContent": {"total": 58.9},
}


@pytest.fixture
def finished_call(make_call, shop, person):
    tool = make_tool(shop, **QUOTE)
    call = make_call(tool, {"order_id": "O1012"})
    ann, _ = person("ann", roles.OPERATOR)
    deciding.decide(call.pk, ann, True, edited_arguments={"order_id": "O1013"})
    now = timezone.now()
    Call.objects.filter(pk=call.pk).update(
        status=Call.Status.COMPLETED,
        result=RESULT,
        forwarded_at=now,
        answered_at=now + timedelta(milliseconds=250),
    )
    return call


@pytest.fixture
def auditor(person):
    return person("aud", roles.AUDITOR)[1]


def test_it_shows_the_timeline_with_durations(auditor, finished_call):
    page = auditor.get(reverse("call", args=[finished_call.pk])).content.decode()
    for step in ("Received", "Policy", "Decided", "Forwarded", "Answered"):
        assert f"<strong>{step}</strong>" in page
    assert "+250 ms" in page
    assert "approved by ann with edited arguments" in page


def test_it_shows_both_versions_of_edited_arguments(auditor, finished_call):
    page = auditor.get(reverse("call", args=[finished_call.pk])).content.decode()
    assert "Arguments as the client sent them" in page and "O1012" in page
    assert "Arguments as approved (edited by ann)" in page and "O1013" in page


def test_it_renders_each_content_type(auditor, finished_call):
    page = auditor.get(reverse("call", args=[finished_call.pk])).content.decode()
    assert "Priced &lt;b&gt;order&lt;/b&gt; O1012." in page
    assert f'<img class="result-image" src="{reverse("call_media", args=[finished_call.pk, 1])}"' in page
    assert f'<audio controls preload="none" src="{reverse("call_media", args=[finished_call.pk, 2])}"' in page
    assert '<a href="https://shop.example/orders/O1012" rel="noopener noreferrer nofollow"' in page
    assert 'href="javascript:' not in page and '<code class="wrap">javascript:alert(1)</code>' in page
    assert "Ship before Friday." in page
    assert f'href="{reverse("call_media", args=[finished_call.pk, 6])}"' in page
    assert "An image of a type the console does not show." in page


def test_it_shows_structured_content_next_to_its_output_schema(auditor, finished_call):
    page = auditor.get(reverse("call", args=[finished_call.pk])).content.decode()
    assert "Structured content" in page and "Total due" in page and "58.9" in page
    assert "Output schema" in page


def test_it_serves_result_media_only_under_types_it_chose(auditor, finished_call):
    def media(index):
        return auditor.get(reverse("call_media", args=[finished_call.pk, index]))

    image = media(1)
    assert image.status_code == 200 and image["Content-Type"] == "image/png" and image.content == PNG
    assert media(2)["Content-Type"] == "audio/wav"
    blob = media(6)
    assert blob["Content-Type"] == "application/octet-stream" and blob["Content-Disposition"].startswith("attachment")
    assert media(7).status_code == 404  # svg
    assert media(0).status_code == 404  # text
    assert media(99).status_code == 404


def test_it_reports_an_error_result(auditor, make_call, refund_tool):
    call = make_call(refund_tool, {"order_id": 1, "amount": 1})
    error = {"content": [{"type": "text", "text": "Refund service unavailable"}], "isError": True}
    Call.objects.filter(pk=call.pk).update(
        status=Call.Status.FAILED, result=error, is_error=True, error="upstream down"
    )
    page = auditor.get(reverse("call", args=[call.pk])).content.decode()
    assert "The tool reported an error: upstream down" in page and "Refund service unavailable" in page


def test_it_lists_recent_calls_with_status_filters(auditor, make_call, refund_tool, person):
    kept = make_call(refund_tool, {"order_id": 1, "amount": 1})
    denied = make_call(refund_tool, {"order_id": 2, "amount": 1})
    deciding.decide(denied.pk, person("ann", roles.OPERATOR)[0], False, "no")
    everything = auditor.get(reverse("calls")).content.decode()
    assert f'id="recent-{kept.pk}"' in everything and f'id="recent-{denied.pk}"' in everything
    assert everything.index(f'id="recent-{denied.pk}"') < everything.index(f'id="recent-{kept.pk}"')
    only_denied = auditor.get(reverse("calls"), {"status": "denied"}).content.decode()
    assert f'id="recent-{kept.pk}"' not in only_denied and "Denied by ann: no" in only_denied
    assert "view=recent&amp;status=denied" in only_denied


def test_it_tells_what_the_server_asked_during_the_call_and_what_the_operator_sent_back(person, refund_call):
    _, client = person("pat", roles.OPERATOR)
    now = timezone.now()
    Call.objects.filter(pk=refund_call.pk).update(
        status=Call.Status.FORWARDED, decided_at=now, decided_by_name="pat", forwarded_at=now
    )
    schema = {"type": "object", "properties": {"confirmed_amount": {"type": "number", "title": "Confirmed amount"}}}
    InputRequest.objects.create(
        call=refund_call,
        server=refund_call.server,
        method="elicitation/create",
        mode="form",
        message="Confirm the refund's amount",
        params={"requestedSchema": schema},
        status=InputRequest.Status.ANSWERED,
        routed_to=InputRequest.Route.OPERATOR,
        answer={"action": "accept", "content": {"confirmed_amount": 40}},
        answered_by_name="pat",
        created_at=now + timedelta(seconds=1),
        answered_at=now + timedelta(seconds=3),
    )

    page = client.get(reverse("call", args=[refund_call.pk])).content.decode()

    assert "What was sent back" in page and "Confirmed amount" in page and ">40<" in page
    steps = ("Received", "Policy", "Decided", "Forwarded", "Input asked", "Input accepted")
    positions = [page.index(f"<strong>{name}</strong>") for name in steps]
    assert positions == sorted(positions)
    assert "Shop: Confirm the refund&#x27;s amount" in page and "by pat" in page
    assert "data-progress hidden" in page
