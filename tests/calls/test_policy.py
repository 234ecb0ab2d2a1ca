from approvals.policy.engine import ALLOW, ASK, DENY, CallFacts, Rule, check_conditions, evaluate


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
    assert evaluate([big], facts(arguments={"refund": {"amount": "lots"}})).action == ASK
    assert evaluate([big], facts(arguments={})).action == ASK


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
