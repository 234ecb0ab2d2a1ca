import json
import re
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from approvals import roles
from approvals.audit.models import AuditEvent
from approvals.calls.models import Call
from approvals.catalog.surface_models import Prompt
from approvals.policy import rule_files, rule_notes, rules
from approvals.policy.models import PolicyRule
from approvals.tokens.credentials import create_token
from tests.fixtures.catalog import make_server, make_tool

REFUND_SCHEMA = {
    "type": "object",
    "properties": {
        "order_id": {"type": "integer"},
        "refund": {"type": "object", "properties": {"amount": {"type": "number"}}},
        "lines": {"type": "array", "items": {"type": "object", "properties": {"sku": {"type": "string"}}}},
    },
}


@pytest.fixture
def shop(db):
    server = make_server("Shop", tool_prefix="shop_")
    make_tool(server, "issue_refund", inputSchema=REFUND_SCHEMA)
    return server


@pytest.fixture
def agent(db):
    return create_token("agent")[0]


@pytest.fixture
def two_rules(shop, agent):
    first = rules.create_rule(rules.RuleRequest("allow", tool_glob="shop_*", name="shop is fine"))
    second = rules.create_rule(
        rules.RuleRequest("deny", conditions=[{"path": "refund.amount", "op": "gt", "value": 100}], name="big refunds")
    )
    return first, second


def form_data(**changes):
    data = {"name": "no order 7", "action": "deny", "server": "", "tool_glob": "shop_*", "client": ""}
    data.update({"conditions": '[{"path": "order_id", "op": "eq", "value": 7}]', "message": "", "enabled": "on"})
    return {**data, **changes}


def names():
    return list(PolicyRule.objects.values_list("name", "position", "enabled"))


def rule_events(action):
    return list(AuditEvent.objects.filter(action=action).order_by("seq"))


def rule_pages(rule):
    return [
        ("post", reverse("rule_add")),
        ("post", reverse("rule_edit", args=[rule.pk])),
        ("post", reverse("rule_move", args=[rule.pk])),
        ("post", reverse("rule_enable", args=[rule.pk])),
        ("post", reverse("rule_delete", args=[rule.pk])),
        ("get", reverse("rule_add")),
        ("get", reverse("rule_edit", args=[rule.pk])),
        ("get", reverse("rule_delete", args=[rule.pk])),
    ]


@pytest.mark.parametrize("role", [roles.OPERATOR, roles.AUDITOR])
def test_it_lets_operators_and_auditors_read_the_policy_and_try_calls_but_change_nothing(login, two_rules, role):
    client = login(role)
    listed = client.get(reverse("rules"))
    assert listed.status_code == 200 and b"big refunds" in listed.content
    assert b"Disable" not in listed.content and b"New rule" not in listed.content
    assert client.get(reverse("policy_try")).status_code == 200
    for method, url in rule_pages(two_rules[1]):
        assert getattr(client, method)(url, form_data()).status_code == 403, url
    assert names() == [("shop is fine", 1, True), ("big refunds", 2, True)]


def test_it_sends_an_anonymous_visitor_to_the_login_page(client, two_rules):
    assert client.get(reverse("rules"))["Location"].startswith(reverse("login"))


def test_it_lists_the_rules_with_what_they_match_and_the_calls_they_decided_lately(admin_client, two_rules, agent):
    allow, deny = two_rules
    now = timezone.now()
    tool = make_tool(allow.server or make_server("Other", tool_prefix="other_"), "lookup")
    for at in (now - timedelta(hours=1), now - timedelta(hours=2), now - timedelta(days=3)):
        Call.objects.create(
            token=agent, tool=tool, tool_name="x", era="modern", status="completed", rule=allow, policy_at=at
        )
    rows = admin_client.get(reverse("rules")).context["rows"]
    assert [(row.rule.name, row.recent) for row in rows] == [("shop is fine", 2), ("big refunds", 0)]
    assert rows[0].last_matched == now - timedelta(hours=1) and rows[1].last_matched is None
    assert rows[1].conditions == ["refund.amount gt 100"]


def test_it_reads_the_list_in_as_many_queries_for_seven_rules_as_for_two(admin_client, two_rules):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def queries():
        with CaptureQueriesContext(connection) as captured:
            assert admin_client.get(reverse("rules")).status_code == 200
        return len(captured.captured_queries)

    for_two = queries()
    for i in range(5):
        rules.create_rule(rules.RuleRequest("ask", name=f"more {i}"))
    assert queries() == for_two


def test_it_adds_a_rule_from_the_form_and_audits_it_as_the_admin(admin_client, two_rules):
    response = admin_client.post(reverse("rule_add"), form_data(position="1"))
    assert response.status_code == 302
    assert names()[0] == ("no order 7", 1, True)
    (event,) = rule_events("rule.created")[-1:]
    assert event.actor_type == "user" and event.data["before"] is None
    assert event.data["after"]["conditions"] == [{"path": "order_id", "op": "eq", "value": 7}]


def test_it_sets_how_a_held_call_is_decided_from_the_form_and_lists_it(admin_client, shop):
    hold = {"approvals_needed": "2", "approval_timeout_seconds": "120", "separation_of_duties": "require"}
    response = admin_client.post(reverse("rule_add"), form_data(action="ask", **hold))
    assert response.status_code == 302
    rule = PolicyRule.objects.get()
    assert (rule.approvals_needed, rule.approval_timeout_seconds, rule.separation_of_duties) == (2, 120, "require")
    listed = admin_client.get(reverse("rules")).content.decode()
    for words in ("2 approvals", "times out after 120 s", "not by the token&#x27;s owner"):
        assert f'<div class="small" data-hold>{words}</div>' in listed
    form = admin_client.get(reverse("rule_edit", args=[rule.pk])).context["form"]
    assert form["approvals_needed"].value() == 2 and form["separation_of_duties"].value() == "require"


def test_it_refuses_a_quorum_of_none_and_a_timeout_of_nothing(admin_client, shop):
    response = admin_client.post(
        reverse("rule_add"), form_data(action="ask", approvals_needed="0", approval_timeout_seconds="-5")
    )
    errors = response.context["form"].errors
    assert "approvals_needed" in errors and "approval_timeout_seconds" in errors
    assert not PolicyRule.objects.exists()


def test_it_shows_the_shells_problems_at_their_fields_and_adds_nothing(admin_client, shop):
    bad = '[{"path": "order_id", "op": "gt", "value": [1]}]'
    response = admin_client.post(reverse("rule_add"), form_data(tool_glob="shop *", conditions=bad))
    errors = response.context["form"].errors
    assert "without spaces" in errors["tool_glob"][0]
    assert "'gt' needs a number or a string value" in errors["conditions"][0]
    assert not PolicyRule.objects.exists()


def test_it_links_each_fault_in_the_summary_to_a_field_on_the_page(admin_client, shop):
    page = admin_client.post(reverse("rule_add"), form_data(action="")).content.decode()
    summary = re.search(r"<div [^>]*data-error-summary>(.*?)</div>", page, re.S).group(1)
    targets = re.findall(r'href="#([^"]+)"', summary)
    assert "id_action_0" in targets
    assert all(f'id="{target}"' in page for target in targets)


def test_it_refuses_conditions_that_are_not_json_without_a_500(admin_client, shop):
    response = admin_client.post(reverse("rule_add"), form_data(conditions="[{oops"))
    assert response.status_code == 200 and "Not valid JSON" in response.context["form"].errors["conditions"][0]


def test_it_edits_a_rule_and_records_before_and_after(admin_client, two_rules):
    deny = two_rules[1]
    data = form_data(name="big refunds", conditions='[{"path": "refund.amount", "op": "gt", "value": 500}]')
    data["annotation_readOnlyHint"] = "false"
    assert admin_client.post(reverse("rule_edit", args=[deny.pk]), data).status_code == 302
    deny.refresh_from_db()
    assert deny.conditions[0]["value"] == 500 and deny.annotations == {"readOnlyHint": False}
    (event,) = rule_events("rule.changed")
    assert (
        event.data["before"]["conditions"][0]["value"] == 100 and event.data["after"]["conditions"][0]["value"] == 500
    )
    assert event.data["before"]["tool_glob"] == "*" and event.data["after"]["tool_glob"] == "shop_*"


def test_it_shows_a_rule_in_its_form_as_it_is_stored(admin_client, two_rules):
    form = admin_client.get(reverse("rule_edit", args=[two_rules[1].pk])).context["form"]
    assert json.loads(form["conditions"].value()) == two_rules[1].conditions
    assert form["action"].value() == "deny"


def test_it_moves_a_rule_up_and_down_keeping_positions_dense(admin_client, two_rules):
    rules.create_rule(rules.RuleRequest("ask", name="third"))
    admin_client.post(reverse("rule_move", args=[two_rules[1].pk]), {"direction": "up"})
    assert names() == [("big refunds", 1, True), ("shop is fine", 2, True), ("third", 3, True)]
    admin_client.post(reverse("rule_move", args=[two_rules[1].pk]), {"direction": "down"})
    admin_client.post(reverse("rule_move", args=[two_rules[1].pk]), {"direction": "down"})
    assert names() == [("shop is fine", 1, True), ("third", 2, True), ("big refunds", 3, True)]
    moves = rule_events("rule.moved")
    assert [(e.data["before"]["position"], e.data["after"]["position"]) for e in moves] == [(2, 1), (1, 2), (2, 3)]


def test_it_moves_a_rule_straight_to_the_position_a_drag_posts(admin_client, two_rules):
    third = rules.create_rule(rules.RuleRequest("ask", name="third"))
    assert admin_client.post(reverse("rule_move", args=[third.pk]), {"position": "1"}).status_code == 302
    assert names() == [("third", 1, True), ("shop is fine", 2, True), ("big refunds", 3, True)]
    (event,) = rule_events("rule.moved")
    assert (event.data["before"]["position"], event.data["after"]["position"]) == (3, 1)


@pytest.mark.parametrize("position", ["0", "4", "first", "-1", "", "²"])
def test_it_refuses_a_position_off_the_list_and_moves_nothing(admin_client, two_rules, position):
    response = admin_client.post(reverse("rule_move", args=[two_rules[0].pk]), {"position": position}, follow=True)
    assert response.status_code == 200
    assert "position" in str(list(response.context["messages"])[0])
    assert names() == [("shop is fine", 1, True), ("big refunds", 2, True)]
    assert not rule_events("rule.moved")


def test_it_leaves_the_last_rule_last_when_asked_to_move_it_down(admin_client, two_rules):
    response = admin_client.post(reverse("rule_move", args=[two_rules[1].pk]), {"direction": "down"}, follow=True)
    assert "between 1 and 2" in response.content.decode()
    assert names() == [("shop is fine", 1, True), ("big refunds", 2, True)] and not rule_events("rule.moved")


def test_it_disables_and_enables_a_rule_each_time_one_event(admin_client, two_rules):
    url = reverse("rule_enable", args=[two_rules[0].pk])
    admin_client.post(url)
    assert names()[0] == ("shop is fine", 1, False)
    admin_client.post(url, {"enabled": "on"})
    assert names()[0] == ("shop is fine", 1, True)
    flips = [(e.data["before"]["enabled"], e.data["after"]["enabled"]) for e in rule_events("rule.changed")]
    assert flips == [(True, False), (False, True)]


def test_it_refuses_a_change_by_get(admin_client, two_rules):
    assert admin_client.get(reverse("rule_enable", args=[two_rules[0].pk])).status_code == 405
    assert names()[0] == ("shop is fine", 1, True)


def test_it_deletes_a_rule_after_asking_and_renumbers_the_rest(admin_client, two_rules):
    confirm = admin_client.get(reverse("rule_delete", args=[two_rules[0].pk]))
    assert b"Delete shop is fine?" in confirm.content
    admin_client.post(reverse("rule_delete", args=[two_rules[0].pk]))
    assert names() == [("big refunds", 1, True)]
    (event,) = rule_events("rule.deleted")
    assert event.data["before"]["name"] == "shop is fine" and event.data["after"] is None


def test_it_answers_404_for_a_rule_that_is_gone(admin_client, db):
    assert admin_client.post(reverse("rule_move", args=[999]), {"direction": "up"}).status_code == 404
    assert admin_client.post(reverse("rule_delete", args=[999])).status_code == 404


def try_call(client, agent, arguments):
    query = {"token": agent.pk, "tool": "shop_issue_refund", "arguments": json.dumps(arguments)}
    return client.get(reverse("policy_try"), query).context["outcome"]


def test_it_tries_a_call_and_says_why_each_rule_above_the_deciding_one_did_not_match(login, two_rules, agent):
    rules.move_rule(two_rules[0].pk, 2)
    auditor = login(roles.AUDITOR)
    events = AuditEvent.objects.count()
    outcome = try_call(auditor, agent, {"refund": {"amount": 50}})
    assert outcome.verdict.action == "allow" and outcome.verdict.rule.id == two_rules[0].pk
    first = outcome.tried[0]
    assert first.rule == two_rules[1] and not first.trial.matched
    assert first.trial.misses == ("condition 1 (refund.amount gt 100) does not hold: refund.amount is 50",)
    assert AuditEvent.objects.count() == events and not Call.objects.exists()


def test_it_says_on_the_try_page_that_a_condition_it_cannot_evaluate_fails_closed(admin_client, two_rules, agent):
    rules.move_rule(two_rules[1].pk, 1)
    response = admin_client.get(
        reverse("policy_try"),
        {"token": agent.pk, "tool": "shop_issue_refund", "arguments": '{"refund": {"amount": "lots"}}'},
    )
    outcome = response.context["outcome"]
    assert outcome.verdict.action == "deny"
    assert "the arguments do not fit" in response.content.decode().lower()
    assert "counted as matched, since a deny rule fails closed" in response.content.decode()


def test_it_says_a_revoked_token_would_never_reach_the_policy(admin_client, two_rules, agent):
    agent.revoked_at = timezone.now()
    agent.save()
    assert "is revoked" in try_call(admin_client, agent, {}).stopped


def test_it_refuses_arguments_that_are_not_a_json_object_without_a_500(admin_client, two_rules, agent):
    response = admin_client.get(
        reverse("policy_try"), {"token": agent.pk, "tool": "shop_issue_refund", "arguments": "[1, 2"}
    )
    assert response.status_code == 200 and response.context["outcome"] is None
    assert "Not valid JSON" in response.context["form"].errors["arguments"][0]


def test_it_suggests_argument_paths_from_each_tools_input_schema(admin_client, shop):
    tools = [t for t in admin_client.get(reverse("rule_add")).context["tools"] if t["kind"] == "tool"]
    # PostgreSQL's jsonb keeps an object's keys in an order of its own, so the paths are compared as a set.
    assert [(t["tool"], t["server"], sorted(t["paths"])) for t in tools] == [
        (
            "shop_issue_refund",
            "Shop",
            sorted(["order_id", "refund", "refund.amount", "lines", "lines.0", "lines.0.sku"]),
        )
    ]


def test_it_links_the_policy_in_the_navigation_for_every_role(login, db):
    for role in (roles.ADMIN, roles.OPERATOR, roles.AUDITOR):
        assert reverse("rules").encode() in login(role, username=role).get(reverse("connect")).content


PAY_SCHEMA = {
    "type": "object",
    "properties": {
        "order_id": {"type": "integer", "title": "Order"},
        "amount": {"type": "number", "maximum": 500},
        "currency": {"type": "string", "enum": ["EUR", "USD"]},
    },
    "required": ["order_id", "amount"],
}


@pytest.fixture
def pay(shop, agent):
    make_tool(shop, "pay", inputSchema=PAY_SCHEMA)
    rules.create_rule(
        rules.RuleRequest("deny", tool_glob="shop_pay", conditions=[{"path": "amount", "op": "gt", "value": 100}])
    )
    return {"token": agent.pk, "tool": "shop_pay"}


def test_it_shows_the_fields_of_a_chosen_tool_and_tries_nothing_yet(admin_client, pay):
    response = admin_client.get(reverse("policy_try"), {**pay, "input": "pick"})
    assert response.context["outcome"] is None
    fields = response.context["form"].schema_form
    assert set(fields.fields) == {"order_id", "amount", "currency"}, "jsonb keeps its own order of keys"
    assert 'name="fields_of" value="shop_pay"' in response.content.decode()


def test_it_tries_a_call_from_the_fields_of_the_tools_input_schema(admin_client, pay):
    fields = {"fields_of": "shop_pay", "arg-order_id": "7", "arg-amount": "250", "arg-currency": "USD"}
    response = admin_client.get(reverse("policy_try"), {**pay, "input": "form", **fields})
    outcome = response.context["outcome"]
    assert outcome.verdict.action == "deny" and not outcome.argument_errors
    assert json.loads(response.context["form"].shown_json()) == {"order_id": 7, "amount": 250, "currency": "USD"}
    cheap = admin_client.get(reverse("policy_try"), {**pay, "input": "form", **fields, "arg-amount": "20"})
    assert cheap.context["outcome"].verdict.action == "ask"


def test_it_shows_the_fields_errors_and_tries_nothing(admin_client, pay):
    fields = {"fields_of": "shop_pay", "arg-order_id": "seven", "arg-amount": ""}
    response = admin_client.get(reverse("policy_try"), {**pay, "input": "form", **fields})
    assert response.status_code == 200 and response.context["outcome"] is None
    errors = response.context["form"].schema_form.errors
    assert "order_id" in errors and "amount" in errors


def test_it_takes_fields_posted_for_another_tool_as_a_new_choice(admin_client, pay):
    fields = {"fields_of": "shop_issue_refund", "arg-order_id": "7", "arg-amount": "250"}
    response = admin_client.get(reverse("policy_try"), {**pay, "input": "form", **fields})
    assert response.context["outcome"] is None
    assert response.context["form"].schema_form.is_bound is False


def test_it_keeps_json_as_the_alternative_and_fills_the_fields_from_it(admin_client, pay):
    arguments = json.dumps({"order_id": 9, "amount": 300})
    response = admin_client.get(reverse("policy_try"), {**pay, "input": "json", "arguments": arguments})
    assert response.context["outcome"].verdict.action == "deny"
    assert response.context["form"].schema_form["amount"].value() == 300


def test_it_adds_a_rule_for_permission_requests_and_lists_it_as_one(admin_client, shop):
    data = form_data(
        action="deny",
        applies_to="permission",
        tool_glob="Bash",
        conditions='[{"path": "command", "op": "contains", "value": "rm -rf"}]',
        message="No recursive deletes",
    )
    response = admin_client.post(reverse("rule_add"), data)
    assert response.status_code == 302
    rule = PolicyRule.objects.get()
    assert (rule.applies_to, rule.tool_glob) == ("permission", "Bash")
    listed = admin_client.get(reverse("rules")).content.decode()
    assert "<span data-applies-to>permission for the agent's</span> tool <code>Bash</code>" in listed
    assert rule_files.export_rules()["rules"][0]["applies_to"] == "permission"


def test_it_adds_a_rule_asking_before_reads_on_a_server_and_lists_it_as_one(admin_client, shop):
    data = form_data(action="ask", applies_to="resource", tool_glob="file://*", server="Shop", conditions="[]")
    response = admin_client.post(reverse("rule_add"), data)
    assert response.status_code == 302
    rule = PolicyRule.objects.get()
    assert (rule.applies_to, rule.tool_glob, rule.server) == ("resource", "file://*", shop)
    listed = admin_client.get(reverse("rules")).content.decode()
    assert "<span data-applies-to>reading</span> URI <code>file://*</code> on <strong>Shop</strong>" in listed
    assert rule_notes.summary(rule) == "ask reading file://* on Shop (no order 7)"


def test_it_suggests_a_prompts_arguments_as_condition_paths(admin_client, shop):
    arguments = [{"name": "customer", "required": True}, {"name": "tone"}]
    Prompt.objects.create(
        server=shop, upstream_name="letter", exposed_name="shop_letter", definition={"arguments": arguments}, digest="d"
    )
    response = admin_client.get(reverse("rule_add"))
    suggested = [entry for entry in response.context["tools"] if entry["kind"] == "prompt"]
    assert suggested == [{"kind": "prompt", "tool": "shop_letter", "server": "Shop", "paths": ["customer", "tone"]}]


def test_it_refuses_annotations_on_a_rule_for_prompts(db):
    request = rules.RuleRequest("deny", applies_to="prompt", annotations={"readOnlyHint": True})
    with pytest.raises(rules.RuleError, match="annotations are a tool's"):
        rules.create_rule(request)


def test_it_refuses_a_permission_rule_that_names_a_server(admin_client, shop):
    data = form_data(action="allow", applies_to="permission", tool_glob="Read", server="Shop")
    response = admin_client.post(reverse("rule_add"), data)
    assert response.status_code == 200
    assert "permission requests come from an agent, not a server" in response.content.decode()
    assert not PolicyRule.objects.exists()


def test_it_tries_a_permission_request_and_says_why_the_rules_for_tools_did_not_match(login, two_rules, agent):
    rules.create_rule(
        rules.RuleRequest(
            "deny",
            tool_glob="Bash",
            applies_to="permission",
            conditions=[{"path": "command", "op": "contains", "value": "rm -rf"}],
            name="no rm -rf",
            message="No recursive deletes",
        )
    )
    query = {"ask-token": agent.pk, "ask-agent_tool": "Bash", "ask-tool_input": '{"command": "rm -rf /"}'}

    page = login("operator").get(reverse("policy_try"), query).content.decode()

    assert "<h2 data-decision>deny, by no rm -rf</h2>" in page
    assert "The client would be told: No recursive deletes" in page
    assert "the rule applies to tool calls" in page
    assert not Call.objects.exists()


def test_it_flags_a_rule_an_earlier_rule_keeps_from_ever_matching_on_the_list_the_form_and_on_saving(
    admin_client, shop, agent
):
    rules.create_rule(rules.RuleRequest("allow", tool_glob="shop_*", name="shop is fine"))
    narrow = rules.create_rule(rules.RuleRequest("deny", tool_glob="shop_issue_*", name="no refunds"))
    reachable = rules.create_rule(rules.RuleRequest("deny", tool_glob="other_*", name="others"))

    listed = admin_client.get(reverse("rules")).content.decode()
    flagged = [row for row in listed.split("<tr ")[1:] if "data-shadowed" in row]
    assert len(flagged) == 1 and 'data-rule="no refunds"' in flagged[0] and "#1 shop is fine" in flagged[0]
    assert "data-shadowed" in admin_client.get(reverse("rule_edit", args=[narrow.pk])).content.decode()
    assert "data-shadowed" not in admin_client.get(reverse("rule_edit", args=[reachable.pk])).content.decode()

    saved = admin_client.post(
        reverse("rule_edit", args=[reachable.pk]),
        form_data(name="others", tool_glob="shop_x", conditions="[]"),
        follow=True,
    )
    assert "this rule can never match: shop is fine at position 1" in saved.content.decode()
