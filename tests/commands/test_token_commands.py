import pytest
from django.core.management import CommandError
from django.urls import reverse

from approvals.models import AuditEvent, ClientToken
from approvals.tokens import changes, credentials
from tests.commands.conftest import run


def test_it_prints_the_secret_as_the_last_line_and_the_secret_authenticates(db):
    output = run("create_token", "ci-agent")
    secret = output.splitlines()[-1]
    assert secret.startswith(credentials.PREFIX)
    assert credentials.authenticate(secret) == ClientToken.objects.get(name="ci-agent")


def test_it_describes_the_token_before_the_secret(db):
    lines = run("create_token", "ci-agent", "--tools", "shop_*").splitlines()
    assert "ci-agent" in lines[0] and "shop_*" in lines[0]
    assert lines[-1] not in "\n".join(lines[:-1])


def test_it_keeps_only_a_hash_of_the_secret(db):
    secret = run("create_token", "ci-agent").splitlines()[-1]
    token = ClientToken.objects.get(name="ci-agent")
    assert token.token_hash == credentials.hash_secret(secret) and secret not in token.token_hash
    assert not any(secret in str(event.data) for event in AuditEvent.objects.all())


def test_it_scopes_the_token_to_the_given_tool_patterns(db):
    run("create_token", "ci-agent", "--tools", "shop_*", "--tools", "records_lookup")
    token = ClientToken.objects.get(name="ci-agent")
    assert token.tool_globs == ["shop_*", "records_lookup"]
    assert credentials.token_allows(token, "shop_issue_refund") and not credentials.token_allows(
        token, "records_delete"
    )


def test_it_gives_every_tool_when_no_pattern_is_named(db):
    run("create_token", "ci-agent")
    assert ClientToken.objects.get(name="ci-agent").tool_globs == ["*"]


def test_it_counts_the_active_tools_the_token_reaches(refund_tool):
    assert "reaches 1 active tools" in run("create_token", "ci-agent", "--tools", "shop_*")
    assert "reaches 0 active tools" in run("create_token", "other", "--tools", "records_*")


@pytest.mark.parametrize("name", ["anonymous", "Anonymous"])
def test_it_refuses_the_reserved_name_anonymous(db, name):
    with pytest.raises(CommandError, match="reserved"):
        run("create_token", name)
    assert not ClientToken.objects.exists()


def test_it_refuses_a_name_already_taken_even_by_a_revoked_token(client_token):
    changes.revoke_token(client_token)
    with pytest.raises(CommandError, match="exists already"):
        run("create_token", "agent")
    assert ClientToken.objects.count() == 1


def test_it_refuses_a_tool_pattern_with_spaces(db):
    with pytest.raises(CommandError, match="without spaces"):
        run("create_token", "ci-agent", "--tools", "shop *")


def test_it_revokes_a_token_so_its_secret_no_longer_authenticates(db):
    secret = run("create_token", "ci-agent").splitlines()[-1]
    assert "revoked token 'ci-agent'" in run("revoke_token", "ci-agent")
    assert credentials.authenticate(secret) is None
    assert AuditEvent.objects.filter(action="token.revoked", actor_type="system").exists()


def test_it_refuses_to_revoke_a_token_that_does_not_exist(db):
    with pytest.raises(CommandError, match="no token named 'ghost'"):
        run("revoke_token", "ghost")


def test_it_says_so_when_the_token_was_revoked_already(client_token):
    run("revoke_token", "agent")
    with pytest.raises(CommandError, match="revoked already"):
        run("revoke_token", "agent")


def test_the_printed_secret_opens_the_mcp_endpoint_until_it_is_revoked(client, transactional_db):
    secret = run("create_token", "ci-agent").splitlines()[-1]
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}},
    }

    def post():
        return client.post(
            reverse("mcp_endpoint"),
            initialize,
            content_type="application/json",
            headers={"Authorization": f"Bearer {secret}", "Accept": "application/json, text/event-stream"},
        )

    assert post().status_code == 200
    run("revoke_token", "ci-agent")
    assert post().status_code == 401
