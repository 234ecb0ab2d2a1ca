from datetime import UTC, datetime, timedelta

import pytest
from django.core.management import CommandError
from django.utils import timezone

from approvals import roles
from approvals.actions import revocation
from approvals.audit.models import AuditEvent
from approvals.calls.models import Call
from approvals.tokens import credentials, issuing
from approvals.tokens.models import ClientToken
from tests.commands.conftest import run
from tests.fixtures.people import make_user
from tests.gateway.conftest import IN_PROCESS, InProcess, Raw


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
    revocation.revoke_token(client_token)
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


def test_the_printed_secret_opens_the_mcp_endpoint_until_it_is_revoked(transactional_db):
    secret = run("create_token", "ci-agent").splitlines()[-1]
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}},
    }

    # /mcp is answered ahead of Django: through the console's ASGI application, as a server hands it requests.
    client = Raw(IN_PROCESS + "/mcp", secret, transport=InProcess())

    def post():
        return client.post(initialize)

    assert post().status_code == 200
    run("revoke_token", "ci-agent")
    assert post().status_code == 401


def test_it_sets_owner_description_expiry_and_limits_from_the_flags(db):
    make_user("alice", roles.OPERATOR)
    before = timezone.now()
    run(
        "create_token",
        "ci-agent",
        "--owner",
        "alice",
        "--description",
        "nightly reports",
        "--expires",
        "30d",
        "--rate",
        "60",
        "--max-pending",
        "5",
    )
    token = ClientToken.objects.get(name="ci-agent")
    assert token.owner.username == "alice" and token.description == "nightly reports"
    assert timedelta(days=30) <= token.expires_at - before < timedelta(days=30, minutes=1)
    assert (token.rate_per_minute, token.max_pending_calls) == (60, 5)
    created = AuditEvent.objects.get(action="token.created")
    assert created.data["before"] is None and created.data["after"]["owner"] == "alice"


@pytest.mark.parametrize(
    "expires, expected",
    [
        ("12h", lambda now: now + timedelta(hours=12)),
        ("2099-01-31", lambda now: timezone.make_aware(datetime(2099, 1, 31))),
        ("2099-01-31T08:30:00+00:00", lambda now: datetime(2099, 1, 31, 8, 30, tzinfo=UTC)),
    ],
)
def test_it_reads_an_expiry_as_hours_days_or_an_iso_date(db, expires, expected):
    now = timezone.now()
    assert abs(issuing.parse_expiry(expires, now) - expected(now)) < timedelta(seconds=1)


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--expires", "soon"], "neither a duration"),
        (["--expires", "2001-01-01"], "not in the future"),
        (["--owner", "ghost"], "no user named 'ghost'"),
        (["--rate", "0"], "revoke the token instead"),
        (["--max-pending", "-1"], "whole number"),
    ],
)
def test_it_refuses_bad_flags_and_creates_nothing(db, flags, message):
    with pytest.raises(CommandError, match=message):
        run("create_token", "ci-agent", *flags)
    assert not ClientToken.objects.exists()


def test_it_rotates_a_token_printing_the_new_secret_last_and_keeping_the_old_one_for_the_grace(db):
    old = run("create_token", "ci-agent").splitlines()[-1]

    output = run("rotate_token", "ci-agent", "--grace", "1h").splitlines()

    new = output[-1]
    assert new.startswith(credentials.PREFIX) and new != old
    assert "stays valid for 1h" in "\n".join(output)
    token = ClientToken.objects.get(name="ci-agent")
    assert credentials.authenticate(new) == token and credentials.authenticate(old) == token
    event = AuditEvent.objects.get(action="token.rotated")
    assert event.data["before"]["prefix"] == old[:11] and event.data["after"]["prefix"] == new[:11]
    assert old not in str(event.data) and new not in str(event.data)


def test_it_refuses_the_old_secret_at_once_without_a_grace_period(db):
    old = run("create_token", "ci-agent").splitlines()[-1]

    new = run("rotate_token", "ci-agent").splitlines()[-1]

    assert credentials.authenticate(old) is None
    assert "replaced by rotation" in credentials.admit(old).refusal
    assert credentials.authenticate(new) is not None


@pytest.mark.parametrize("grace, message", [("an hour", "no duration"), ("1w", "no duration")])
def test_it_refuses_a_grace_it_cannot_read_and_keeps_the_secret(db, grace, message):
    old = run("create_token", "ci-agent").splitlines()[-1]
    with pytest.raises(CommandError, match=message):
        run("rotate_token", "ci-agent", "--grace", grace)
    assert credentials.authenticate(old) is not None


def test_it_refuses_to_rotate_a_revoked_or_unknown_token(client_token):
    revocation.revoke_token(client_token)
    with pytest.raises(CommandError, match="revoked"):
        run("rotate_token", "agent")
    with pytest.raises(CommandError, match="no token named 'ghost'"):
        run("rotate_token", "ghost")


def test_it_cancels_the_revoked_tokens_waiting_calls(pending_call):
    run("revoke_token", "agent")

    pending_call.refresh_from_db()
    assert pending_call.status == Call.Status.CANCELLED and pending_call.reason == "the client token was revoked"
