"""OIDC_ROLE_MAP and the groups claim, as plain functions: only what the map names gives a role."""

import pytest

from approvals.signin.oidc_claims import claimed_groups, parse_role_map, roles_for

EXAMPLE = "mcp-admins=admin,mcp-operators=operator,mcp-auditors=auditor"


def test_it_reads_the_example_map():
    assert parse_role_map(EXAMPLE) == {"mcp-admins": "admin", "mcp-operators": "operator", "mcp-auditors": "auditor"}


def test_it_reads_spaces_empty_items_and_a_group_holding_an_equals_sign():
    assert parse_role_map(" cn=ops = operator ,, mcp-admins=admin ,") == {"cn=ops": "operator", "mcp-admins": "admin"}
    assert parse_role_map("") == {}


@pytest.mark.parametrize("text", ["mcp-admins", "=admin", "mcp-admins=", "mcp-admins=admin,broken"])
def test_it_refuses_an_item_that_is_not_group_equals_role(text):
    with pytest.raises(ValueError, match="is not GROUP=ROLE"):
        parse_role_map(text)


def test_it_refuses_a_group_mapped_to_two_roles_but_not_one_mapped_twice_alike():
    with pytest.raises(ValueError, match="maps to both 'admin' and 'operator'"):
        parse_role_map("staff=admin,staff=operator")
    assert parse_role_map("staff=admin,staff=admin") == {"staff": "admin"}


@pytest.mark.parametrize(
    ("claims", "groups"),
    [
        ({"groups": ["mcp-operators", "everyone"]}, ["mcp-operators", "everyone"]),
        ({"groups": "mcp-operators"}, ["mcp-operators"]),
        ({"groups": ["mcp-operators", 7, None, {"name": "mcp-admins"}]}, ["mcp-operators"]),
        ({"groups": {"mcp-admins": True}}, []),
        ({"groups": None}, []),
        ({}, []),
    ],
)
def test_it_takes_strings_alone_from_the_groups_claim(claims, groups):
    assert claimed_groups(claims, "groups") == groups


def test_it_reaches_into_a_nested_claim_by_a_dotted_name_unless_the_claims_hold_that_name_as_such():
    nested = {"realm_access": {"roles": ["mcp-admins"]}}
    assert claimed_groups(nested, "realm_access.roles") == ["mcp-admins"]
    assert claimed_groups({"realm_access.roles": ["flat"], **nested}, "realm_access.roles") == ["flat"]
    assert claimed_groups({"realm_access": ["mcp-admins"]}, "realm_access.roles") == []
    assert claimed_groups(nested, "realm_access.missing") == []


def test_it_gives_the_roles_of_the_mapped_groups_and_nothing_for_the_others():
    role_map = parse_role_map(EXAMPLE)
    assert roles_for(["mcp-operators", "mcp-auditors", "everyone"], role_map) == {"operator", "auditor"}
    assert roles_for(["everyone", "admin", "MCP-ADMINS"], role_map) == set()
    assert roles_for([], role_map) == set()
