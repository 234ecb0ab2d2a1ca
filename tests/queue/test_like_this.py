"""A pending call as the start of a rule: "Always allow / deny calls like this" lead to the scope page."""

import re

from django.urls import reverse

from approvals import roles
from approvals.actions import trial
from approvals.calls.lifecycle import call_binding
from approvals.display import like_this
from approvals.policy import rules
from approvals.policy.models import PolicyRule


def like_links(admin, call) -> dict:
    """The call page's "like this" links by their kind."""
    page = admin.get(reverse("call", args=[call.pk])).content.decode()
    return {kind: href for href, kind in re.findall(r'<a href="([^"]+)" data-like="(\w+)">', page)}


def test_it_links_a_call_to_the_scope_page_with_deny_chosen_and_the_tool_as_the_scope(person, make_call, refund_tool):
    rules.create_rule(rules.RuleRequest("ask", tool_glob="shop_*", name="asks"))
    call = make_call(refund_tool, {"order_id": 1012, "amount": 40})
    _, admin = person("ada", roles.ADMIN)
    links = like_links(admin, call)
    scope_page = reverse("call_like_this", args=[call.pk])
    assert links == {"allow": f"{scope_page}?action=allow", "deny": f"{scope_page}?action=deny"}

    response = admin.get(links["deny"])
    form, page = response.context["form"], response.content.decode()
    assert (form["action"].value(), form["scope"].value()) == ("deny", "tool")
    assert page.index("Add rule and deny") < page.index("Add rule and approve")
    preview = admin.post(scope_page, {"scope": "tool", "action": "deny", "preview": "1"}).content.decode()
    assert "A deny rule would be placed" in preview and not PolicyRule.objects.filter(action="deny").exists()


def test_it_makes_a_rule_above_the_one_that_asked_which_allows_the_same_call(person, make_call, refund_tool):
    rules.create_rule(rules.RuleRequest("deny", tool_glob="nothing_*", name="first"))
    rules.create_rule(rules.RuleRequest("ask", tool_glob="shop_*", name="asks"))
    call = make_call(refund_tool, {"order_id": 1012, "amount": 40, "reason": "late"})
    _, admin = person("ada", roles.ADMIN)
    url = like_links(admin, call)["allow"]
    form = admin.get(url).context["form"]
    assert [path for path, _ in form.fields["values"].choices] == ["order_id", "amount", "reason"]

    data = {"scope": "values", "values": ["order_id", "amount", "reason"], "binding": call_binding(call)}
    response = admin.post(url, {**data, "action": "allow", "decision": "approve"})

    assert response.status_code == 302, response.context["form"].errors
    assert list(PolicyRule.objects.values_list("name", "position")) == [
        ("first", 1),
        ("allow shop_issue_refund with these values", 2),
        ("asks", 3),
    ]
    verdict = trial.try_call(call.token, refund_tool, call.arguments).verdict
    assert (verdict.action, verdict.rule_name) == ("allow", "allow shop_issue_refund with these values")
    other = trial.try_call(call.token, refund_tool, {**call.arguments, "amount": 41}).verdict
    assert other.action == "ask"


def test_it_answers_an_action_it_does_not_know_with_the_form(person, make_call, refund_tool):
    call = make_call(refund_tool, {"order_id": 1012, "amount": 40})
    _, admin = person("ada", roles.ADMIN)
    url = reverse("call_like_this", args=[call.pk])
    response = admin.post(url, {"scope": "tool", "action": "ask", "preview": "1"})
    assert response.status_code == 200 and "action: Select a valid choice" in response.content.decode()
    assert admin.get(f"{url}?action=ask").context["form"]["action"].value() == "allow"


def test_it_leaves_out_of_the_conditions_what_a_checkbox_cannot_carry():
    arguments = {
        "note": "x" * 201,
        "limit": 3,
        "filter": {"state": "open", "tags": ["a"]},
        "deep": {"a": {"b": {"c": {"d": 1}}}},
    }

    assert like_this.conditions(arguments) == [
        {"path": "limit", "op": "eq", "value": 3},
        {"path": "filter.state", "op": "eq", "value": "open"},
    ]
