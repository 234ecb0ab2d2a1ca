"""Where the console looks for an upstream server's authorization, and what it chooses there: pure functions."""

import pytest

from approvals.protocol import oauth_discovery as discovery
from approvals.protocol import oauth_params
from approvals.protocol.oauth_discovery import DiscoveryError

AS = "https://auth.example.com"


def metadata(**overrides):
    return {
        "issuer": AS,
        "authorization_endpoint": f"{AS}/authorize",
        "token_endpoint": f"{AS}/token",
        "code_challenge_methods_supported": ["S256"],
    } | overrides


def test_it_reads_the_bearer_challenge_among_others_with_quoted_and_escaped_values():
    header = 'Basic realm="x", Bearer error="insufficient_scope", scope="a b", resource_metadata="https://m/x", k=v\\"'
    challenges = discovery.parse_challenges(header)
    assert challenges["basic"] == {"realm": "x"}
    assert challenges["bearer"]["scope"] == "a b"
    assert challenges["bearer"]["resource_metadata"] == "https://m/x"
    assert discovery.bearer_challenge('Bearer realm="a \\"quoted\\" b"') == {"realm": 'a "quoted" b'}
    assert discovery.bearer_challenge("") == {}
    assert discovery.bearer_challenge("Negotiate abc==") == {}


def test_it_looks_for_resource_metadata_from_the_challenge_then_with_the_path_then_at_the_root():
    assert discovery.resource_metadata_urls("https://mcp.example.com/api/mcp", "https://m.example.com/prm") == [
        "https://m.example.com/prm",
        "https://mcp.example.com/.well-known/oauth-protected-resource/api/mcp",
        "https://mcp.example.com/.well-known/oauth-protected-resource",
    ]
    assert discovery.resource_metadata_urls("https://MCP.example.com/") == [
        "https://mcp.example.com/.well-known/oauth-protected-resource"
    ]


def test_it_inserts_an_issuers_path_into_the_well_known_urls_and_keeps_the_root_for_one_without():
    assert discovery.authorization_server_metadata_urls("https://a.example.com/tenant1") == [
        "https://a.example.com/.well-known/oauth-authorization-server/tenant1",
        "https://a.example.com/.well-known/openid-configuration/tenant1",
        "https://a.example.com/tenant1/.well-known/openid-configuration",
    ]
    assert discovery.authorization_server_metadata_urls("https://a.example.com") == [
        "https://a.example.com/.well-known/oauth-authorization-server",
        "https://a.example.com/.well-known/openid-configuration",
    ]


def test_it_falls_back_to_the_2025_03_26_endpoints_at_the_servers_origin():
    assert discovery.legacy_endpoints("http://localhost:9/v1/mcp") == {
        "authorization_endpoint": "http://localhost:9/authorize",
        "token_endpoint": "http://localhost:9/token",
        "registration_endpoint": "http://localhost:9/register",
    }


def test_it_refuses_metadata_whose_issuer_is_on_another_origin_or_that_is_not_an_object():
    with pytest.raises(DiscoveryError, match="another origin"):
        discovery.check_server_metadata(metadata(issuer="https://evil.example.com"), f"{AS}/.well-known/x")
    with pytest.raises(DiscoveryError, match="not a JSON object"):
        discovery.check_server_metadata(["issuer"], f"{AS}/.well-known/x")
    with pytest.raises(DiscoveryError, match="token_endpoint"):
        discovery.check_server_metadata(metadata(token_endpoint="javascript:x"), f"{AS}/.well-known/x")


def test_it_refuses_a_server_without_s256_unless_a_2025_03_26_server_says_nothing_of_pkce():
    with pytest.raises(DiscoveryError, match="S256"):
        discovery.check_server_metadata(metadata(code_challenge_methods_supported=["plain"]), AS)
    with pytest.raises(DiscoveryError, match="S256"):
        discovery.check_server_metadata(metadata(code_challenge_methods_supported=None), AS)
    legacy = metadata()
    del legacy["code_challenge_methods_supported"]
    assert discovery.check_server_metadata(legacy, AS, legacy=True) is legacy


def test_it_takes_only_a_resource_that_names_this_server():
    assert discovery.check_resource("https://MCP.example.com/mcp", "https://mcp.example.com/mcp") == (
        "https://mcp.example.com/mcp"
    )
    assert discovery.check_resource("https://mcp.example.com", "https://mcp.example.com/mcp")
    with pytest.raises(DiscoveryError, match="not for"):
        discovery.check_resource("https://evil.example.com/mcp", "https://mcp.example.com/mcp")
    with pytest.raises(DiscoveryError, match="not for"):
        discovery.check_resource("https://mcp.example.com/mcp2", "https://mcp.example.com/mcp")


def test_it_chooses_the_scope_in_the_specs_order():
    assert oauth_params.choose_scope("files:read", ["a", "b"]) == "files:read"
    assert oauth_params.choose_scope("", ["a", "b"]) == "a b"
    assert oauth_params.choose_scope("", None) == ""
    assert oauth_params.choose_scope("x", ["a"], fixed=" admin  ") == "admin"


def test_it_adds_offline_access_only_when_the_authorization_server_lists_it():
    assert oauth_params.with_offline_access("a b", ["a", "offline_access"]) == "a b offline_access"
    assert oauth_params.with_offline_access("", ["offline_access"]) == "offline_access"
    assert oauth_params.with_offline_access("a offline_access", ["offline_access"]) == "a offline_access"
    assert oauth_params.with_offline_access("a", ["a", "b"]) == "a"
    assert oauth_params.with_offline_access("a", None) == "a"
    assert oauth_params.with_offline_access("a", "offline_access") == "a"
    assert oauth_params.consent_prompt("a offline_access") == "consent"
    assert oauth_params.consent_prompt("a b") == ""


def test_a_step_up_asks_for_what_was_held_and_what_was_named():
    assert oauth_params.step_up_scope("a b", "b c") == "a b c"
    assert oauth_params.covers("a b c", "c a")
    assert not oauth_params.covers("a", "a b")


def test_it_derives_the_pkce_challenge_as_rfc_7636_does():
    # RFC 7636 appendix B.
    assert oauth_params.challenge_for("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk") == (
        "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
    )
    assert len(oauth_params.new_verifier()) >= 43
    assert oauth_params.new_state() != oauth_params.new_state()


def test_the_authorization_url_keeps_the_endpoints_own_query_and_drops_empty_parameters():
    url = oauth_params.authorization_url("https://a/authorize?tenant=t", {"scope": "", "state": "s t"})
    assert url == "https://a/authorize?tenant=t&state=s+t"
