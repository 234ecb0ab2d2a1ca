"""A pending call as the start of a rule: "Always allow calls like this" on the queue."""

from urllib.parse import parse_qs, urlsplit

from django.urls import reverse

from approvals import roles
from approvals.actions import trial
from approvals.display import like_this
from approvals.policy import rules
from approvals.policy.models import PolicyRule


def test_it_makes_a_rule_above_the_one_that_asked_which_allows_the_same_call(person, make_call, refund_tool):
    rules.create_rule(rules.RuleRequest("deny", tool_glob="nothing_*", name="first"))
    rules.create_rule(rules.RuleRequest("ask", tool_glob="shop_*", name="asks"))
    call = make_call(refund_tool, {"order_id": 1012, "amount": 40, "reason": "late"})
    _, admin = person("ada", roles.ADMIN)

    url = like_this.rule_query(call, "allow")
    form = admin.get(url).context["form"]
    query = {name: values[0] for name, values in parse_qs(urlsplit(url).query).items()}
    assert query["position"] == "2" and query["tool_glob"] == "shop_issue_refund" and query["client"] == "agent-7"
    assert form["tool_glob"].value() == "shop_issue_refund" and form["server"].value() == "Shop"
    assert '"path": "amount", "op": "eq", "value": 40' in form["conditions"].value()
    response = admin.post(reverse("rule_add"), {**query, "enabled": "on", "separation_of_duties": "inherit"})

    assert response.status_code == 302, response.context["form"].errors
    assert list(PolicyRule.objects.values_list("name", "position")) == [
        ("first", 1),
        ("allow shop_issue_refund from agent-7", 2),
        ("asks", 3),
    ]
    verdict = trial.try_call(call.token, refund_tool, call.arguments).verdict
    assert (verdict.action, verdict.rule_name) == ("allow", "allow shop_issue_refund from agent-7")
    other = trial.try_call(call.token, refund_tool, {**call.arguments, "amount": 41}).verdict
    assert other.action == "ask"


def test_it_leaves_out_of_the_conditions_what_a_link_cannot_carry():
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
