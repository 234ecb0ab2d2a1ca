import re
from datetime import timedelta

import pytest
from django.urls import reverse

from approvals import roles
from approvals.audit.models import AuditEvent
from approvals.calls import deciding, ending, lifecycle
from approvals.calls.models import Call


def decide_post(client, call, decision, reason="", binding=None, **headers):
    data = {"decision": decision, "reason": reason, "binding": binding or lifecycle.call_binding(call)}
    return client.post(reverse("call_decide", args=[call.pk]), data, **headers)


@pytest.mark.parametrize("role", [roles.OPERATOR, roles.ADMIN, roles.AUDITOR])
def test_it_shows_the_queue_to_every_role(person, refund_call, role):
    _, client = person("pat", role)
    page = client.get(reverse("queue")).content.decode()
    assert f'id="call-{refund_call.pk}"' in page
    assert "shop_issue_refund" in page and "Issue a refund" in page and "agent-7" in page
    assert ("Approve</button>" in page) is (role != roles.AUDITOR)


def test_it_refuses_the_queue_to_a_user_without_a_role(person, refund_call):
    _, client = person("nobody")
    assert client.get(reverse("queue")).status_code == 403


def test_it_sends_anonymous_visitors_to_log_in(client, refund_call):
    response = client.get(reverse("queue"))
    assert response.status_code == 302 and "/login/" in response["Location"]


def test_it_lists_pending_calls_oldest_first_with_the_count_in_the_title(person, make_call, refund_tool, refund_call):
    newer = make_call(refund_tool, {"order_id": 2, "amount": 1})
    done = make_call(refund_tool, {"order_id": 3, "amount": 1})
    deciding.decide(done.pk, person("ann", roles.OPERATOR)[0], False, "no")
    _, client = person("pat", roles.OPERATOR)
    page = client.get(reverse("queue")).content.decode()
    assert page.index(f'id="call-{refund_call.pk}"') < page.index(f'id="call-{newer.pk}"')
    assert f'id="call-{done.pk}"' not in page
    assert re.search(r"<title>\(2\) Queue", page)


def test_it_renders_arguments_against_the_schema(person, refund_call):
    _, client = person("pat", roles.OPERATOR)
    page = client.get(reverse("queue")).content.decode()
    assert "Order" in page and "The order to refund." in page and "1012" in page
    assert "no rule matched: ask by default" in page
    assert "destructive" in page and "unverified" in page


def test_it_folds_long_strings_and_nests_values(person, make_call, ship_tool):
    call = make_call(ship_tool, {"address": {"city": "Lyon\n" * 10}, "parcels": [1, 2]})
    _, client = person("pat", roles.OPERATOR)
    page = client.get(reverse("call", args=[call.pk])).content.decode()
    assert '<details class="fold">' in page and "City" in page
    assert page.count('<ul class="tree">') >= 3


def test_it_lets_an_operator_approve(person, refund_call):
    _, client = person("ann", roles.OPERATOR)
    response = decide_post(client, refund_call, "approve")
    assert response.status_code == 302 and response["Location"] == reverse("queue")
    refund_call.refresh_from_db()
    assert refund_call.status == Call.Status.APPROVED and refund_call.decided_by_name == "ann"


def test_it_forbids_an_auditor_to_decide(person, refund_call):
    _, client = person("aud", roles.AUDITOR)
    assert decide_post(client, refund_call, "approve").status_code == 403
    assert client.get(reverse("call_edit", args=[refund_call.pk])).status_code == 403
    refund_call.refresh_from_db()
    assert refund_call.status == Call.Status.PENDING


def test_it_tells_a_late_operator_who_decided_first(person, refund_call):
    ann, _ = person("ann", roles.OPERATOR)
    deciding.decide(refund_call.pk, ann, True)
    _, bob = person("bob", roles.OPERATOR)
    page = decide_post(bob, refund_call, "deny", reason="too late", follow=True)
    assert page.status_code == 409
    assert "Already approved by ann." in page.content.decode()


def test_it_answers_a_scripted_decision_in_json(person, refund_call):
    ann, _ = person("ann", roles.OPERATOR)
    deciding.decide(refund_call.pk, ann, True)
    _, bob = person("bob", roles.OPERATOR)
    response = decide_post(bob, refund_call, "deny", reason="no", HTTP_ACCEPT="application/json")
    assert response.status_code == 409
    assert response.json() == {
        "call_id": refund_call.pk,
        "status": "approved",
        "message": "Already approved by ann.",
        "level": "warning",
    }
    missing = decide_post(bob, refund_call, "deny", HTTP_ACCEPT="application/json")
    assert missing.status_code == 400 and "Give a reason" in missing.json()["message"]


def test_it_refuses_a_denial_without_a_reason(person, refund_call):
    _, client = person("ann", roles.OPERATOR)
    page = decide_post(client, refund_call, "deny", reason="  ", follow=True).content.decode()
    assert "Give a reason for the denial" in page
    refund_call.refresh_from_db()
    assert refund_call.status == Call.Status.PENDING


def test_it_denies_with_the_reason(person, refund_call):
    _, client = person("ann", roles.OPERATOR)
    decide_post(client, refund_call, "deny", reason="customer asked us not to")
    refund_call.refresh_from_db()
    assert refund_call.status == Call.Status.DENIED and refund_call.reason == "customer asked us not to"
    assert "customer asked us not to" in ending.error_text(refund_call)


def test_it_refuses_an_approval_of_what_was_not_shown(person, refund_call):
    _, client = person("ann", roles.OPERATOR)
    page = decide_post(client, refund_call, "approve", binding="0" * 64, follow=True)
    assert page.status_code == 409 and "changed since it was shown" in page.content.decode()
    refund_call.refresh_from_db()
    assert refund_call.status == Call.Status.PENDING


@pytest.mark.parametrize("accept", ["text/html", "application/json"])
@pytest.mark.parametrize("decision", ["approve", "deny"])
def test_it_refuses_a_decision_with_another_call_s_binding_or_none_and_records_nothing(
    person, make_call, refund_tool, refund_call, decision, accept
):
    other = make_call(refund_tool, {"order_id": 7, "amount": 1})
    _, client = person("ann", roles.OPERATOR)
    before = AuditEvent.objects.count()
    url = reverse("call_decide", args=[refund_call.pk])
    for binding in (lifecycle.call_binding(other), "", None):
        data = {"decision": decision, "reason": "seen elsewhere"} | ({} if binding is None else {"binding": binding})
        response = client.post(url, data, HTTP_ACCEPT=accept)
        assert response.status_code == 409
        assert "changed since it was shown" in response.content.decode()
    refund_call.refresh_from_db()
    assert refund_call.status == Call.Status.PENDING and not refund_call.approvals.exists()
    assert AuditEvent.objects.count() == before


def test_it_builds_a_form_for_a_flat_schema_and_approves_the_edit(person, refund_call):
    _, client = person("ann", roles.OPERATOR)
    url = reverse("call_edit", args=[refund_call.pk])
    page = client.get(url).content.decode()
    assert 'name="arg-amount"' in page and "Arrived late" in page
    data = {
        "binding": lifecycle.call_binding(refund_call),
        "arg-order_id": "1012",
        "arg-amount": "25",
        "arg-reason": "late",
        "reason": "half",
    }
    response = client.post(url, data)
    assert response.status_code == 302
    refund_call.refresh_from_db()
    assert refund_call.status == Call.Status.APPROVED
    assert refund_call.edited_arguments == {"order_id": 1012, "amount": 25, "reason": "late"}
    edited = AuditEvent.objects.get(call_id=refund_call.pk, action="call.edited")
    assert edited.data["before"]["amount"] == 40 and edited.data["after"]["amount"] == 25


def test_it_rerenders_the_form_with_the_errors_of_invalid_arguments(person, refund_call):
    _, client = person("ann", roles.OPERATOR)
    url = reverse("call_edit", args=[refund_call.pk])
    data = {"binding": lifecycle.call_binding(refund_call), "arg-order_id": "1012", "arg-amount": "900"}
    response = client.post(url, data)
    assert response.status_code == 400
    assert "500" in response.content.decode()
    refund_call.refresh_from_db()
    assert refund_call.status == Call.Status.PENDING


def test_it_edits_a_nested_schema_as_json_validated_on_the_server(person, make_call, ship_tool):
    call = make_call(ship_tool, {"address": {"city": "Lyon"}})
    _, client = person("ann", roles.OPERATOR)
    url = reverse("call_edit", args=[call.pk])
    assert "data-json-editor" in client.get(url).content.decode()
    binding = lifecycle.call_binding(call)
    bad = client.post(url, {"binding": binding, "arguments": '{"address": {}}'})
    assert bad.status_code == 400 and "city" in bad.content.decode()
    broken = client.post(url, {"binding": binding, "arguments": "{"})
    assert broken.status_code == 400 and "Not valid JSON" in broken.content.decode()
    good = client.post(url, {"binding": binding, "arguments": '{"address": {"city": "Nice"}, "parcels": [2]}'})
    assert good.status_code == 302
    call.refresh_from_db()
    assert call.edited_arguments == {"address": {"city": "Nice"}, "parcels": [2]}


def test_it_sends_the_editor_of_a_decided_call_back_to_the_queue(person, refund_call):
    ann, client = person("ann", roles.OPERATOR)
    deciding.decide(refund_call.pk, ann, False, "no")
    page = client.get(reverse("call_edit", args=[refund_call.pk]), follow=True).content.decode()
    assert "Already denied by ann: no." in page


def test_it_answers_a_decision_on_no_call_with_404(person, refund_call):
    _, client = person("ann", roles.OPERATOR)
    data = {"decision": "approve", "binding": lifecycle.call_binding(refund_call)}
    assert client.post(reverse("call_decide", args=[refund_call.pk + 100]), data).status_code == 404
    assert client.post(reverse("call_decide", args=[refund_call.pk + 100]), {"decision": "deny"}).status_code == 404


def test_it_tells_a_late_click_the_decision_even_once_the_call_ran(person, refund_call):
    ann, _ = person("ann", roles.OPERATOR)
    deciding.decide(refund_call.pk, ann, True)
    Call.objects.filter(pk=refund_call.pk).update(status=Call.Status.COMPLETED)
    _, bob = person("bob", roles.OPERATOR)
    response = decide_post(bob, refund_call, "approve", HTTP_ACCEPT="application/json")
    assert response.json()["message"] == "Already approved by ann."


def test_it_points_a_row_at_its_own_call_s_decision_edit_and_details_urls(person, refund_call):
    _, client = person("pat", roles.OPERATOR)
    page = client.get(reverse("queue")).content.decode()
    # The call's page: from the row's line and from its detail.
    for name, times in (("call_decide", 2), ("call_edit", 1), ("call_claim", 1), ("call", 2)):
        assert page.count(f'"{reverse(name, args=[refund_call.pk])}"') == times


def test_it_sorts_the_queue_by_arrival_or_by_time_left(person, make_call, refund_tool):
    _, client = person("pat", roles.OPERATOR)
    early, late = (make_call(refund_tool, {"order_id": n, "amount": 1}) for n in (1, 2))
    Call.objects.filter(pk=early.pk).update(expires_at=late.expires_at + timedelta(minutes=5))

    def order(query):
        page = client.get(reverse("queue") + query).content.decode()
        return sorted((early, late), key=lambda call: page.index(f'id="call-{call.pk}"'))

    assert order("") == [early, late]
    assert order("?sort=expiry") == [late, early]
    assert order("?sort=nonsense") == [early, late]
