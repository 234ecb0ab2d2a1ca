import io

import pytest
from django.core.management import CommandError, call_command

from approvals.audit.models import AuditEvent
from approvals.calls import lifecycle
from approvals.policy import engine
from approvals.policy.models import PolicyRule
from tests.commands.conftest import run


def add(*args):
    return run("add_rule", *args)


def ordered():
    return list(PolicyRule.objects.values_list("name", "position"))


def test_it_appends_a_rule_at_the_end_by_default(shop):
    add("--action", "deny", "--name", "first")
    add("--action", "allow", "--server", "Shop", "--name", "second")
    assert ordered() == [("first", 1), ("second", 2)]


def test_it_inserts_a_rule_at_the_given_position_and_renumbers_those_after(shop):
    add("--action", "deny", "--name", "a")
    add("--action", "deny", "--name", "b")
    output = add("--action", "allow", "--name", "new", "--position", "2")
    assert "at position 2" in output
    assert ordered() == [("a", 1), ("new", 2), ("b", 3)]


def test_it_stores_every_field_it_was_given(shop, client_token):
    add(
        "--action",
        "deny",
        "--server",
        "Shop",
        "--tool",
        "shop_issue_*",
        "--client",
        "agent",
        "--message",
        "Refunds go through support",
        "--annotation",
        "readOnlyHint=false",
        "--conditions",
        '[{"path": "amount", "op": "gt", "value": 100}]',
        "--name",
        "big refunds",
    )
    rule = PolicyRule.objects.get()
    assert (rule.action, rule.server, rule.client, rule.tool_glob) == ("deny", shop, client_token, "shop_issue_*")
    assert rule.annotations == {"readOnlyHint": False}
    assert rule.conditions == [{"path": "amount", "op": "gt", "value": 100}]
    assert rule.message == "Refunds go through support"


def test_it_records_the_new_rule_in_the_audit_log_as_the_system(shop):
    add("--action", "allow", "--server", "Shop", "--tool", "shop_*")
    event = AuditEvent.objects.get(action="rule.created")
    assert event.actor_type == "system" and event.server_id == shop.pk
    assert event.data["before"] is None
    assert event.data["after"]["tool_glob"] == "shop_*" and event.data["after"]["server"] == "Shop"


def test_the_new_rule_decides_the_calls_it_matches(shop, client_token, refund_tool):
    add("--action", "deny", "--tool", "shop_issue_*", "--message", "not today")
    facts = engine.CallFacts(client_token.pk, shop.pk, "shop_issue_refund", {}, None)
    verdict = engine.evaluate(lifecycle.policy_rules(), facts)
    assert verdict.action == engine.DENY and verdict.message == "not today"


def test_it_names_every_unknown_server_and_client_at_once(db):
    with pytest.raises(CommandError) as refused:
        add("--action", "allow", "--server", "Nowhere", "--client", "nobody")
    assert "no server named 'Nowhere'" in str(refused.value)
    assert "no client token named 'nobody'" in str(refused.value)


def test_it_leaves_no_rule_and_no_audit_event_behind_when_refused(db):
    with pytest.raises(CommandError):
        add("--action", "allow", "--server", "Nowhere")
    assert not PolicyRule.objects.exists()
    assert not AuditEvent.objects.filter(action__startswith="rule.").exists()


def test_it_refuses_an_action_that_does_not_exist(db):
    with pytest.raises(CommandError, match="invalid choice"):
        add("--action", "maybe")


@pytest.mark.parametrize(
    "annotation, problem",
    [
        ("readOnlyHint", "KEY=true or KEY=false"),
        ("readOnlyHint=yes", "KEY=true or KEY=false"),
        ("cheapHint=true", "unknown annotation cheapHint"),
    ],
)
def test_it_refuses_a_malformed_or_unknown_annotation(db, annotation, problem):
    with pytest.raises(CommandError, match=problem):
        add("--action", "allow", "--annotation", annotation)


@pytest.mark.parametrize(
    "conditions, problem",
    [
        ("{not json", "not valid JSON"),
        ('[{"path": "amount", "op": "bigger"}]', "condition 1 needs"),
        ('{"path": "amount"}', "must be a list"),
    ],
)
def test_it_refuses_malformed_conditions(db, conditions, problem):
    with pytest.raises(CommandError, match=problem):
        add("--action", "deny", "--conditions", conditions)


@pytest.mark.parametrize("position", ["0", "3"])
def test_it_refuses_a_position_outside_the_list(db, position):
    add("--action", "deny")
    with pytest.raises(CommandError, match="between 1 and 2"):
        add("--action", "allow", "--position", position)


def test_it_refuses_a_tool_pattern_with_spaces(db):
    with pytest.raises(CommandError, match="without spaces"):
        add("--action", "allow", "--tool", "shop *")


def test_it_warns_that_annotations_never_match_an_untrusted_server(shop):
    err = io.StringIO()
    call_command(
        "add_rule",
        "--action",
        "allow",
        "--server",
        "Shop",
        "--annotation",
        "readOnlyHint=true",
        stdout=io.StringIO(),
        stderr=err,
    )
    assert "Shop is not trusted" in err.getvalue()


def test_it_lists_the_rules_in_the_order_they_are_tried(shop, client_token):
    add("--action", "allow", "--server", "Shop", "--tool", "shop_get_*", "--name", "reads")
    add("--action", "deny", "--client", "agent", "--message", "no", "--position", "1")
    lines = run("list_rules").splitlines()
    assert lines[0].startswith("1\t") and "deny * from agent" in lines[0] and "message: no" in lines[0]
    assert lines[1].startswith("2\t") and "allow shop_get_* on Shop (reads)" in lines[1]
    assert lines[-1] == "then: ask (no rule matched)"


def test_it_says_every_call_is_asked_about_when_there_are_no_rules(db):
    assert run("list_rules").strip() == "no rules: every call is asked about"


def test_it_adds_a_rule_that_needs_two_approvals_within_its_own_timeout(shop):
    output = add("--action", "ask", "--approvals-needed", "2", "--approval-timeout", "90", "--name", "pair")
    assert "[2 approvals; times out after 90 s] (pair)" in output
    rule = PolicyRule.objects.get()
    assert (rule.approvals_needed, rule.approval_timeout_seconds, rule.separation_of_duties) == (2, 90, "inherit")


def test_it_adds_a_rule_that_escalates_its_calls_before_they_expire(shop):
    output = add("--action", "ask", "--approval-timeout", "600", "--escalate-before", "120", "--name", "urgent")
    assert "[times out after 600 s; escalates 120 s before it expires] (urgent)" in output
    assert PolicyRule.objects.get().escalate_before_seconds == 120


def test_it_refuses_a_quorum_beyond_reason(db):
    with pytest.raises(CommandError, match="approvals needed must be a whole number from 1 to 10"):
        add("--action", "ask", "--approvals-needed", "11")
    assert not PolicyRule.objects.exists()
