import pytest

from approvals.policy.engine import (
    ALLOW,
    ASK,
    DENY,
    PERMISSION,
    PROMPT,
    RESOURCE,
    CallFacts,
    Rule,
    check_conditions,
    evaluate,
)
from approvals.policy.shadowing import shadowing


def facts(tool="demo_delete_record", arguments=None, annotations=None, server_id=1, client_id=7):
    return CallFacts(
        client_id=client_id, server_id=server_id, tool_name=tool, arguments=arguments or {}, annotations=annotations
    )


def test_it_asks_when_no_rule_matches():
    verdict = evaluate([Rule(1, "reads", ALLOW, tool_glob="demo_lookup_*")], facts())
    assert verdict.action == ASK and verdict.rule is None
    assert "ask by default" in verdict.rule_name


def test_it_lets_the_first_matching_rule_decide():
    rules = [Rule(1, "no deletes", DENY, tool_glob="*delete*", message="Deleting is off"), Rule(2, "all", ALLOW)]
    verdict = evaluate(rules, facts())
    assert verdict.action == DENY and verdict.rule_name == "no deletes" and verdict.message == "Deleting is off"


def test_it_counts_annotations_only_from_trusted_servers():
    rule = Rule(1, "read-only is fine", ALLOW, annotations={"readOnlyHint": True})
    assert evaluate([rule], facts(annotations={"readOnlyHint": True})).action == ALLOW
    assert evaluate([rule], facts(annotations=None)).action == ASK


def test_it_matches_server_and_client():
    rule = Rule(1, "", ALLOW, server_id=2, client_id=7)
    assert evaluate([rule], facts(server_id=2)).action == ALLOW
    assert evaluate([rule], facts(server_id=1)).action == ASK
    assert evaluate([rule], facts(server_id=2, client_id=8)).action == ASK


def test_it_checks_argument_conditions():
    big = Rule(1, "big refunds", DENY, conditions=[{"path": "refund.amount", "op": "gt", "value": 100}])
    assert evaluate([big], facts(arguments={"refund": {"amount": 250}})).action == DENY
    assert evaluate([big], facts(arguments={"refund": {"amount": 50}})).action == ASK


def test_it_supports_membership_glob_and_presence():
    rule = Rule(
        1,
        "",
        ALLOW,
        conditions=[
            {"path": "region", "op": "in", "value": ["eu", "us"]},
            {"path": "path", "op": "glob", "value": "/tmp/*"},
            {"path": "force", "op": "absent"},
        ],
    )
    assert evaluate([rule], facts(arguments={"region": "eu", "path": "/tmp/x"})).action == ALLOW
    assert evaluate([rule], facts(arguments={"region": "eu", "path": "/etc/x"})).action == ASK
    assert evaluate([rule], facts(arguments={"region": "eu", "path": "/tmp/x", "force": True})).action == ASK


def test_it_never_takes_true_for_one():
    rule = Rule(1, "", ALLOW, conditions=[{"path": "n", "op": "gte", "value": 1}])
    assert evaluate([rule], facts(arguments={"n": True})).action == ASK


def test_it_explains_malformed_conditions():
    assert check_conditions([{"path": "a", "op": "eq", "value": 1}]) == []
    assert check_conditions({"path": "a"}) == ["conditions must be a list"]
    assert "needs a list value" in check_conditions([{"path": "a", "op": "in", "value": 3}])[0]
    assert "'op' among" in check_conditions([{"path": "a", "op": "regex"}])[0]
    assert "unknown keys operator" in check_conditions([{"path": "a", "operator": "eq"}])[0]
    assert "needs a number or a string" in check_conditions([{"path": "a", "op": "gt", "value": [1]}])[0]
    assert "'glob' needs a string" in check_conditions([{"path": "a", "op": "glob", "value": 3}])[0]


BIG = {"path": "amount", "op": "gt", "value": 100}
UNEVALUABLE = [
    ({"amount": "lots"}, '"lots" cannot be ordered against 100'),
    ({}, "amount is missing"),
    ({"amount": True}, "true cannot be ordered against 100"),
]


@pytest.mark.parametrize("arguments, why", UNEVALUABLE)
@pytest.mark.parametrize("action", [DENY, ASK])
def test_it_fails_closed_a_deny_or_ask_condition_it_cannot_evaluate(action, arguments, why):
    verdict = evaluate([Rule(1, "big", action, conditions=[BIG]), Rule(2, "rest", ALLOW)], facts(arguments=arguments))
    assert verdict.action == action and verdict.rule.id == 1
    (note,) = verdict.trials[0].notes
    assert why in note and f"counted as matched, since a {action} rule fails closed" in note


@pytest.mark.parametrize("arguments, why", UNEVALUABLE)
def test_it_fails_closed_an_allow_condition_it_cannot_evaluate(arguments, why):
    verdict = evaluate([Rule(1, "small", ALLOW, conditions=[{**BIG, "op": "lte"}])], facts(arguments=arguments))
    assert verdict.action == ASK and verdict.rule is None
    (miss,) = verdict.trials[0].misses
    assert why in miss and "counted as not matched, since an allow rule fails closed" in miss


@pytest.mark.parametrize(
    "condition, arguments",
    [
        ({"path": "path", "op": "glob", "value": "/tmp/*"}, {"path": 7}),
        ({"path": "tags", "op": "contains", "value": "x"}, {"tags": {"x": 1}}),
        ({"path": "note", "op": "contains", "value": 3}, {"note": "a3"}),
        ({"path": "region", "op": "glob", "value": "e*"}, {}),
    ],
)
def test_it_cannot_evaluate_a_glob_or_contains_on_the_wrong_type(condition, arguments):
    assert evaluate([Rule(1, "", DENY, conditions=[condition])], facts(arguments=arguments)).action == DENY
    assert evaluate([Rule(1, "", ALLOW, conditions=[condition])], facts(arguments=arguments)).action == ASK


def test_it_treats_a_missing_value_as_unequal_rather_than_unknown():
    rules = [Rule(1, "", DENY, conditions=[{"path": "mode", "op": "eq", "value": "wipe"}])]
    assert evaluate(rules, facts(arguments={})).action == ASK
    rules = [Rule(1, "", ALLOW, conditions=[{"path": "mode", "op": "ne", "value": "wipe"}])]
    assert evaluate(rules, facts(arguments={})).action == ALLOW


def test_it_says_why_each_rule_above_the_deciding_one_did_not_match():
    rules = [
        Rule(1, "other server", ALLOW, server_id=9),
        Rule(2, "other client", ALLOW, client_id=8),
        Rule(3, "lookups", ALLOW, tool_glob="demo_lookup_*"),
        Rule(4, "read-only", ALLOW, annotations={"readOnlyHint": True}),
        Rule(5, "small", ALLOW, conditions=[{"path": "id", "op": "lt", "value": 10}]),
        Rule(6, "the rest", DENY),
        Rule(7, "never reached", ALLOW),
    ]
    verdict = evaluate(rules, facts(arguments={"id": 12}, annotations={"readOnlyHint": False}))
    assert verdict.rule.id == 6 and [t.rule.id for t in verdict.trials] == [1, 2, 3, 4, 5, 6]
    misses = [t.misses for t in verdict.trials]
    assert misses[0] == ("the call goes to another server",)
    assert misses[1] == ("the call comes from another client",)
    assert misses[2] == ("the tool demo_delete_record does not match 'demo_lookup_*'",)
    assert misses[3] == ("the tool's readOnlyHint is false, the rule needs true",)
    assert misses[4] == ("condition 1 (id lt 10) does not hold: id is 12",)
    assert verdict.trials[5].matched and misses[5] == ()


def test_it_says_annotations_do_not_count_for_an_untrusted_server():
    verdict = evaluate([Rule(1, "", ALLOW, annotations={"readOnlyHint": True})], facts(annotations=None))
    assert "server is not trusted" in verdict.trials[0].misses[0]


def permission(tool="Bash", arguments=None):
    return CallFacts(
        client_id=7, server_id=None, tool_name=tool, arguments=arguments or {}, annotations=None, kind=PERMISSION
    )


def test_a_rule_applies_to_tool_calls_or_to_permission_requests_never_both():
    tools = Rule(1, "every tool", DENY)
    prompts = Rule(2, "reads", ALLOW, tool_glob="Read", applies_to=PERMISSION)
    assert evaluate([tools, prompts], permission("Read")).rule == prompts
    assert evaluate([prompts, tools], facts(tool="Read")).rule == tools
    assert evaluate([tools], permission("Read")).trials[0].misses == ("the rule applies to tool calls",)


def test_it_matches_a_permission_request_by_the_agents_tool_and_its_input():
    rm = Rule(
        1,
        "no rm -rf",
        DENY,
        tool_glob="Bash",
        applies_to=PERMISSION,
        conditions=[{"path": "command", "op": "contains", "value": "rm -rf"}],
        message="No recursive deletes",
    )
    reads = [Rule(2, "", ALLOW, tool_glob=name, applies_to=PERMISSION) for name in ("Read", "Grep")]
    rules = [rm, *reads]
    assert evaluate(rules, permission(arguments={"command": "rm -rf /"})).message == "No recursive deletes"
    assert evaluate(rules, permission(arguments={"command": "ls"})).action == ASK
    assert evaluate(rules, permission("Grep", {"pattern": "TODO"})).action == ALLOW
    assert evaluate(rules, permission("Write", {"file_path": "/x"})).action == ASK


def read(uri, server_id=1):
    return CallFacts(
        client_id=7, server_id=server_id, tool_name=uri, arguments={"uri": uri}, annotations=None, kind=RESOURCE
    )


def prompt(name, arguments=None):
    return CallFacts(client_id=7, server_id=1, tool_name=name, arguments=arguments or {}, annotations=None, kind=PROMPT)


def test_it_allows_reads_and_prompts_no_rule_names_and_says_so():
    every_tool = Rule(1, "every tool", DENY)
    assert evaluate([every_tool], read("file://etc/passwd")).action == ALLOW
    verdict = evaluate([every_tool], prompt("surface_greeting"))
    assert verdict.action == ALLOW and verdict.rule is None and verdict.rule_name == "no rule matched: allow by default"


def test_it_matches_a_read_by_a_uri_glob_and_a_server():
    docs = Rule(1, "docs are public", ALLOW, tool_glob="file://docs/*", applies_to=RESOURCE)
    rest = Rule(2, "ask about the rest", ASK, server_id=1, applies_to=RESOURCE)
    rules = [docs, rest]
    assert evaluate(rules, read("file://docs/guides/start.md")).rule == docs
    assert evaluate(rules, read("file://etc/passwd")).rule == rest
    assert evaluate(rules, read("file://etc/passwd", server_id=2)).action == ALLOW
    assert evaluate([docs], read("file://etc/passwd")).trials[0].misses == (
        "the URI file://etc/passwd does not match 'file://docs/*'",
    )


def test_it_denies_a_prompt_by_name_and_by_its_arguments():
    review = Rule(1, "", DENY, tool_glob="surface_review_code", applies_to=PROMPT, message="Not here")
    perl = Rule(2, "", ASK, applies_to=PROMPT, conditions=[{"path": "language", "op": "eq", "value": "perl"}])
    assert evaluate([review, perl], prompt("surface_review_code")).message == "Not here"
    assert evaluate([review, perl], prompt("surface_explain", {"language": "perl"})).action == ASK
    assert evaluate([review, perl], prompt("surface_explain", {"language": "rust"})).action == ALLOW
    assert evaluate([review], read("surface_review_code")).trials[0].misses == ("the rule applies to prompt gets",)


# Each operator that compares a value, with a value of the wrong type: a list where a string is compared
# (for contains, which looks for a string in a list too, a number).
WRONG_TYPES = [
    ("eq", "x", ["x"]),
    ("ne", "x", ["x"]),
    ("in", ["x", "y"], ["x"]),
    ("not_in", ["x", "y"], ["z"]),
    ("lt", "m", ["x"]),
    ("lte", "m", ["x"]),
    ("gt", "m", ["x"]),
    ("gte", "m", ["x"]),
    ("contains", "x", 42),
    ("glob", "x*", ["x"]),
    ("eq", 5, "5"),
    ("in", [1, 2], True),
    ("ne", {"a": 1}, [1]),
]


@pytest.mark.parametrize("op, expected, value", WRONG_TYPES)
def test_it_cannot_evaluate_a_value_of_the_wrong_type_for_any_operator(op, expected, value):
    condition = {"path": "mode", "op": op, "value": expected}
    arguments = facts(arguments={"mode": value})

    for action in (DENY, ASK):
        verdict = evaluate([Rule(1, "", action, conditions=[condition]), Rule(2, "", ALLOW)], arguments)
        assert verdict.action == action and verdict.rule.id == 1, op
        assert "cannot be evaluated" in verdict.trials[0].notes[0]
    verdict = evaluate([Rule(1, "", ALLOW, conditions=[condition])], arguments)
    assert verdict.action == ASK and "cannot be evaluated" in verdict.trials[0].misses[0]


def test_it_still_compares_values_of_one_kind_and_null_with_anything():
    rule = [Rule(1, "", ALLOW, conditions=[{"path": "n", "op": "eq", "value": 1}])]
    assert evaluate(rule, facts(arguments={"n": 1.0})).action == ALLOW
    rule = [Rule(1, "", ALLOW, conditions=[{"path": "n", "op": "ne", "value": None}])]
    assert evaluate(rule, facts(arguments={"n": "set"})).action == ALLOW
    rule = [Rule(1, "", ALLOW, conditions=[{"path": "tags", "op": "contains", "value": "x"}])]
    assert evaluate(rule, facts(arguments={"tags": ["x", "y"]})).action == ALLOW


AMOUNT_OVER_100 = {"path": "amount", "op": "gt", "value": 100}


@pytest.mark.parametrize(
    ("earlier", "later"),
    [
        (Rule(1, "all", ALLOW), Rule(2, "deletes", DENY, tool_glob="demo_delete_*")),
        (Rule(1, "demo", ASK, tool_glob="demo_*"), Rule(2, "deletes", DENY, tool_glob="demo_delete_*", client_id=7)),
        (Rule(1, "deletes", DENY, tool_glob="*_delete"), Rule(2, "one", ALLOW, tool_glob="demo_delete", server_id=1)),
        (
            Rule(1, "big", DENY, conditions=[AMOUNT_OVER_100]),
            Rule(
                2, "big refunds", ASK, tool_glob="refund", conditions=[AMOUNT_OVER_100, {"path": "x", "op": "exists"}]
            ),
        ),
        (
            Rule(1, "reads", ALLOW, annotations={"readOnlyHint": True}),
            Rule(2, "reads on 1", ASK, server_id=1, annotations={"readOnlyHint": True, "openWorldHint": False}),
        ),
    ],
    ids=["everything", "a prefix", "a suffix", "fewer conditions", "fewer annotations"],
)
def test_it_finds_a_rule_an_earlier_one_covers(earlier, later):
    assert shadowing([earlier, later]) == {2: earlier}
    assert (
        evaluate(
            [earlier, later],
            facts(
                tool=later.tool_glob,
                arguments={"amount": 500, "x": 1},
                annotations={"readOnlyHint": True, "openWorldHint": False},
            ),
        ).rule
        == earlier
    )


@pytest.mark.parametrize(
    ("earlier", "later"),
    [
        (Rule(1, "deletes", DENY, tool_glob="demo_delete_*"), Rule(2, "demo", ASK, tool_glob="demo_*")),
        (Rule(1, "server 1", DENY, server_id=1), Rule(2, "any server", ALLOW)),
        (Rule(1, "client 7", DENY, client_id=7), Rule(2, "client 8", ALLOW, client_id=8)),
        (Rule(1, "big", DENY, conditions=[AMOUNT_OVER_100]), Rule(2, "any", ASK)),
        (
            Rule(1, "small", ALLOW, conditions=[AMOUNT_OVER_100]),
            Rule(2, "small or unknown", ASK, conditions=[AMOUNT_OVER_100]),
        ),
        (Rule(1, "tools", ALLOW), Rule(2, "agent", ASK, applies_to=PERMISSION)),
        (Rule(1, "odd", ALLOW, tool_glob="demo_[ab]*"), Rule(2, "a", ASK, tool_glob="demo_a*")),
        (Rule(1, "suffix", ALLOW, tool_glob="*x]"), Rule(2, "bracket", ASK, tool_glob="a[x]")),
    ],
    ids=[
        "a narrower earlier",
        "another server",
        "another client",
        "conditions",
        "allow fails closed the other way",
        "another kind",
        "a bracket",
        "a bracket in the later",
    ],
)
def test_it_flags_no_rule_that_some_call_could_still_reach(earlier, later):
    assert shadowing([earlier, later]) == {}
