"""A rule from a held call by scope, previewed, and the call decided with it."""

from django.urls import reverse

from approvals import roles
from approvals.actions import trial
from approvals.calls.lifecycle import call_binding
from approvals.calls.models import Call
from approvals.policy import rules
from approvals.policy.models import PolicyRule


def asks_everything():
    rules.create_rule(rules.RuleRequest("ask", name="ask everything"))


def test_it_adds_a_rule_for_the_tool_and_approves_the_call_in_hand_and_the_next_alike(person, make_call, refund_tool):
    asks_everything()
    call = make_call(refund_tool, {"order_id": 1012, "amount": 40, "reason": "late"})
    _, admin = person("ada", roles.ADMIN)
    url = reverse("call_like_this", args=[call.pk])
    assert "Add rule and approve" in admin.get(url).content.decode()

    response = admin.post(url, {"scope": "tool", "binding": call_binding(call), "decision": "approve"}, follow=True)

    assert "approved" in response.content.decode().lower()
    assert list(PolicyRule.objects.values_list("name", "position", "action", "conditions")) == [
        ("allow shop_issue_refund", 1, "allow", []),
        ("ask everything", 2, "ask", []),
    ]
    call.refresh_from_db()
    assert call.status != Call.Status.PENDING and call.decided_by_name == "ada"
    other = trial.try_call(call.token, refund_tool, {**call.arguments, "amount": 41}).verdict
    assert (other.action, other.rule_name) == ("allow", "allow shop_issue_refund")


def test_it_keeps_only_the_ticked_argument_values_and_denies(person, make_call, refund_tool):
    asks_everything()
    call = make_call(refund_tool, {"order_id": 1012, "amount": 40, "reason": "late"})
    _, admin = person("ada", roles.ADMIN)
    data = {
        "scope": "values",
        "values": ["order_id"],
        "binding": call_binding(call),
        "decision": "deny",
    }
    admin.post(reverse("call_like_this", args=[call.pk]), data)

    rule = PolicyRule.objects.get(position=1)
    assert (rule.action, rule.conditions) == ("deny", [{"path": "order_id", "op": "eq", "value": 1012}])
    call.refresh_from_db()
    assert call.status == Call.Status.DENIED


def test_it_previews_the_recent_calls_the_rule_would_match_and_adds_nothing(person, make_call, refund_tool):
    asks_everything()
    first = make_call(refund_tool, {"order_id": 1, "amount": 5})
    call = make_call(refund_tool, {"order_id": 2, "amount": 5})
    _, admin = person("ada", roles.ADMIN)
    data = {"scope": "values", "values": ["amount"], "binding": call_binding(call), "preview": "1"}
    response = admin.post(reverse("call_like_this", args=[call.pk]), data)

    assert {seen.pk for seen in response.context["matched"]} == {first.pk, call.pk}
    assert "above ask everything" in response.content.decode()
    assert PolicyRule.objects.count() == 1


def test_it_adds_the_rule_but_leaves_a_call_that_changed_since_it_was_shown(person, make_call, refund_tool):
    asks_everything()
    call = make_call(refund_tool, {"order_id": 1012, "amount": 40})
    _, admin = person("ada", roles.ADMIN)
    response = admin.post(
        reverse("call_like_this", args=[call.pk]),
        {"scope": "tool", "binding": "stale", "decision": "approve"},
        follow=True,
    )
    assert "the call was not decided" in response.content.decode()
    call.refresh_from_db()
    assert call.status == Call.Status.PENDING and PolicyRule.objects.count() == 2


def test_it_lets_no_operator_make_a_rule(person, make_call, refund_tool):
    call = make_call(refund_tool, {"order_id": 1012, "amount": 40})
    _, operator = person("otto", roles.OPERATOR)
    data = {"scope": "tool", "binding": call_binding(call), "decision": "approve"}
    assert operator.post(reverse("call_like_this", args=[call.pk]), data).status_code == 403
    assert not PolicyRule.objects.exists()


def test_it_offers_the_servers_annotations_only_for_a_trusted_server(person, make_call, refund_tool):
    call = make_call(refund_tool, {"order_id": 1012, "amount": 40})
    _, admin = person("ada", roles.ADMIN)
    url = reverse("call_like_this", args=[call.pk])
    assert "Any tool of Shop" not in admin.get(url).content.decode()
    refund_tool.server.trusted = True
    refund_tool.server.save()
    assert "Any tool of Shop with the annotations" in admin.get(url).content.decode()

    admin.post(url, {"scope": "annotations", "binding": call_binding(call), "decision": "deny"})
    rule = PolicyRule.objects.get()
    assert (rule.server, rule.tool_glob, rule.annotations["destructiveHint"]) == (refund_tool.server, "*", True)


def test_it_answers_bad_choices_with_the_form_and_adds_nothing(person, make_call, refund_tool):
    call = make_call(refund_tool, {"order_id": 1012, "amount": 40})
    _, admin = person("ada", roles.ADMIN)
    url = reverse("call_like_this", args=[call.pk])
    for data in ({"scope": "everything", "decision": "approve"}, {"scope": "values", "values": ["nope"]}):
        response = admin.post(url, data)
        assert response.status_code == 200 and response.context["form"].errors
    assert admin.post(reverse("call_like_this", args=[999999]), {"scope": "tool"}).status_code == 404
    assert not PolicyRule.objects.exists()
    call.refresh_from_db()
    assert call.status == Call.Status.PENDING
