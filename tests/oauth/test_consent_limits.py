"""A person grants a client no more than their role may make on the Tokens page: the tools an admin set for the
role (admins every tool, other roles none until set), for at most OAUTH_GRANT_MAX_DAYS, never for ever."""

from urllib.parse import unquote_plus

import pytest
from django.test import override_settings

from approvals import roles
from approvals.oauth.models import RoleScope
from approvals.tokens.models import ClientToken
from tests.fixtures.people import make_user

pytestmark = pytest.mark.django_db


def signed_in(client, *role_names):
    client.force_login(make_user("olivia", *role_names))
    return client


def test_it_lets_an_operator_mint_no_token_the_tokens_page_refuses_them(client, registered):
    browser = signed_in(client, roles.OPERATOR)

    response = browser.post(registered.url(scope="tools:*"), {"decision": "allow", "expiry": ""})

    assert response.status_code == 403
    assert "yours may let it use none" in response.content.decode()
    assert browser.get("/tokens/new/").status_code == 403
    assert not ClientToken.objects.exists()


def test_it_grants_an_operator_the_tools_an_admin_set_for_the_role(client, registered, app_client):
    RoleScope.objects.create(role=roles.OPERATOR, tool_globs=["demo_*", "crm_lookup"])
    browser = signed_in(client, roles.OPERATOR)

    tokens = registered.grant(browser, app_client, scope=None)

    assert tokens["scope"] == "tools:demo_* tools:crm_lookup"
    assert ClientToken.objects.get().tool_globs == ["demo_*", "crm_lookup"]


def test_it_grants_within_the_roles_tools_what_the_client_asks(client, registered, app_client):
    RoleScope.objects.create(role=roles.OPERATOR, tool_globs=["demo_*"])
    browser = signed_in(client, roles.OPERATOR)

    registered.grant(browser, app_client, scope="tools:demo_echo")

    assert ClientToken.objects.get().tool_globs == ["demo_echo"]


@pytest.mark.parametrize(
    ("scope", "granted"),
    [
        ("tools:*", ["demo_*"]),
        ("tools:demo_* tools:github_*", ["demo_*"]),
        ("tools:demo_echo tools:*", ["demo_echo", "demo_*"]),
    ],
)
def test_it_grants_no_more_of_what_the_client_asks_than_the_role_may(client, registered, app_client, scope, granted):
    RoleScope.objects.create(role=roles.OPERATOR, tool_globs=["demo_*"])
    browser = signed_in(client, roles.OPERATOR)

    page = browser.get(registered.url(scope=scope)).content.decode()
    tokens = registered.grant(browser, app_client, scope=scope)

    assert "It asked for more" in page
    assert tokens["scope"] == " ".join("tools:" + glob for glob in granted)
    assert ClientToken.objects.get().tool_globs == granted


@pytest.mark.parametrize("scope", ["tools:github_*", "tools:dem?_echo"])
def test_it_refuses_a_scope_wholly_beyond_the_roles_tools(client, registered, scope):
    RoleScope.objects.create(role=roles.OPERATOR, tool_globs=["demo_*"])
    browser = signed_in(client, roles.OPERATOR)

    response = browser.post(registered.url(scope=scope), {"decision": "allow", "expiry": "7d"})

    answer = response.content.decode() + unquote_plus(response.get("Location", ""))
    assert "invalid_scope" in answer
    assert "may grant tools:demo_* only" in answer
    assert not ClientToken.objects.exists()


def test_it_lets_an_admin_grant_every_tool_unless_set_otherwise(client, registered, app_client):
    browser = signed_in(client, roles.ADMIN)

    registered.grant(browser, app_client)

    assert ClientToken.objects.get().tool_globs == ["*"]


def test_it_offers_no_grant_for_ever(client, registered):
    browser = signed_in(client, roles.ADMIN)

    page = browser.get(registered.url()).content.decode()
    response = browser.post(registered.url(), {"decision": "allow", "expiry": ""})

    assert '<option value="90d">90 days</option>' in page
    assert "never" not in page
    assert response.status_code == 200
    assert "choose one of the expiries offered" in response.content.decode()
    assert not ClientToken.objects.exists()


@override_settings(OAUTH_GRANT_MAX_DAYS=10)
def test_it_offers_no_expiry_past_the_most_days_set(client, registered, app_client):
    browser = signed_in(client, roles.ADMIN)

    page = browser.get(registered.url()).content.decode()
    refused = browser.post(registered.url(), {"decision": "allow", "expiry": "30d"})
    registered.grant(browser, app_client, expiry="10d")

    assert [value in page for value in ('value="7d"', 'value="10d" selected', 'value="30d"')] == [True, True, False]
    assert "choose one of the expiries offered" in refused.content.decode()
    token = ClientToken.objects.get()
    assert 9 <= (token.expires_at - token.created_at).days <= 10


def test_it_lets_an_admin_set_only_tool_patterns_for_a_role():
    scope = RoleScope(role=roles.OPERATOR, tool_globs=["has space"])

    with pytest.raises(Exception, match="without spaces"):
        scope.full_clean()
