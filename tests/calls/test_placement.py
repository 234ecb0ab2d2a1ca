from approvals.policy.engine import ALLOW, ASK, DENY, Rule
from approvals.policy.placement import partly_covering, placement, shared_calls

CATCH_ALL = Rule(1, "ask everything", ASK)


def test_it_places_a_new_rule_above_the_catch_all_that_would_take_all_its_calls():
    ordered = [Rule(5, "reads", ALLOW, tool_glob="shop_get_*"), CATCH_ALL]
    found = placement(ordered, Rule(None, "no exports", DENY, tool_glob="*export*"))
    assert (found.position, found.above) == (2, CATCH_ALL)


def test_it_places_a_new_rule_last_when_no_earlier_rule_takes_all_its_calls():
    ordered = [Rule(5, "reads", ALLOW, tool_glob="shop_get_*"), Rule(6, "server 2", DENY, server_id=2)]
    found = placement(ordered, Rule(None, "exports", DENY, tool_glob="*export*"))
    assert (found.position, found.above) == (3, None)


def test_it_names_an_earlier_rule_that_takes_some_of_a_rules_calls_and_which():
    big = {"path": "amount", "op": "gt", "value": 100}
    earlier = Rule(1, "big refunds", DENY, tool_glob="shop_*", server_id=2, conditions=[big])
    later = Rule(2, "refunds", ALLOW, tool_glob="shop_refund")
    assert partly_covering([earlier, later], 1) == [earlier]
    words = shared_calls(earlier, later, {("server", 2): "Shop"})
    assert words == "calls to shop_refund on Shop if amount gt 100"


def test_it_names_no_rule_that_takes_none_or_all_of_a_rules_calls():
    later = Rule(3, "shop", DENY, tool_glob="shop_*")
    others = Rule(1, "others", ALLOW, tool_glob="other_*")
    assert partly_covering([others, CATCH_ALL, later], 2) == []
    assert partly_covering([Rule(1, "ends in x", ALLOW, tool_glob="*_x"), later], 1) != []


def test_it_names_the_calls_two_patterns_share_when_neither_covers_the_other():
    earlier = Rule(1, "no exports", DENY, tool_glob="*export*")
    later = Rule(2, "demo", ALLOW, tool_glob="demo_*")
    assert partly_covering([earlier, later], 1) == [earlier]
    assert shared_calls(earlier, later, {}) == "calls to demo_* matching *export*"
    assert partly_covering([Rule(1, "other", DENY, tool_glob="other_*"), later], 1) == []
