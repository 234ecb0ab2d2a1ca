import pytest
from django.urls import reverse

from approvals.calls.models import Call
from approvals.policy import rules
from approvals.policy.models import PolicyRule
from approvals.tokens.credentials import create_token
from tests.fixtures.catalog import make_server, make_tool


@pytest.fixture
def shop(db):
    server = make_server("Shop", tool_prefix="shop_")
    make_tool(server, "export_customers")
    make_tool(server, "get_order")
    rules.create_rule(rules.RuleRequest("allow", tool_glob="shop_get_*", name="reads"))
    rules.create_rule(rules.RuleRequest("ask", name="ask everything"))
    return server


def no_exports(**changes):
    data = {"name": "no exports", "action": "deny", "server": "", "tool_glob": "*export*", "client": ""}
    return {**data, "conditions": "[]", "message": "", "enabled": "on", **changes}


def order():
    return list(PolicyRule.objects.values_list("name", flat=True))


def test_it_places_a_rule_from_the_form_above_the_catch_all_and_says_why(admin_client, shop):
    page = admin_client.post(reverse("rule_add"), no_exports(), follow=True).content.decode()
    assert order() == ["reads", "no exports", "ask everything"]
    assert "Placed at position 2, above ask everything (position 2)" in page


def test_it_shows_where_a_rule_would_go_and_adds_nothing_until_asked(admin_client, shop):
    response = admin_client.post(reverse("rule_add"), no_exports(placement="1"))
    page = response.content.decode()
    assert "data-placing" in page and "above ask everything" in page
    assert response.context["form"]["position"].value() == 2
    assert order() == ["reads", "ask everything"]


def test_it_keeps_the_position_the_admin_chose(admin_client, shop):
    admin_client.post(reverse("rule_add"), no_exports(position="3"))
    assert order() == ["reads", "ask everything", "no exports"]


def test_it_counts_what_each_rule_decided_of_the_latest_calls_and_would_decide_now(admin_client, shop):
    agent = create_token("agent")[0]
    export = shop.tools.get(exposed_name="shop_export_customers")
    catch_all = PolicyRule.objects.get(name="ask everything")
    Call.objects.create(
        token=agent,
        tool=export,
        server=shop,
        tool_name=export.exposed_name,
        era="modern",
        status="pending",
        rule=catch_all,
    )
    admin_client.post(reverse("rule_add"), no_exports())
    rows = {row.rule.name: row for row in admin_client.get(reverse("rules")).context["rows"]}
    assert (rows["ask everything"].decided_latest, rows["ask everything"].would_decide) == (1, 0)
    assert (rows["no exports"].decided_latest, rows["no exports"].would_decide) == (0, 1)


def test_it_says_which_earlier_rule_takes_some_of_a_rules_calls_and_which(admin_client, shop):
    big = '[{"path": "amount", "op": "gt", "value": 100}]'
    admin_client.post(reverse("rule_add"), no_exports(name="big", tool_glob="shop_*", conditions=big, position="1"))
    saved = admin_client.post(
        reverse("rule_add"), no_exports(action="allow", tool_glob="shop_export_*"), follow=True
    ).content.decode()
    assert "calls to shop_export_* if amount gt 100: big at position 1 takes them first" in saved
    rule = PolicyRule.objects.get(name="no exports")
    form = admin_client.get(reverse("rule_edit", args=[rule.pk])).content.decode()
    assert "data-partly-covered" in form and "calls to shop_export_* if amount gt 100" in form
