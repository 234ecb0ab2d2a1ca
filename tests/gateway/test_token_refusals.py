"""Which secrets the endpoint takes: expired, revoked and rotated-out tokens are refused, each saying why."""

from datetime import timedelta

import httpx
import pytest
from asgiref.sync import sync_to_async
from django.utils import timezone

from approvals.actions.revocation import revoke_token
from approvals.tokens.changes import rotate_token
from approvals.tokens.credentials import create_token
from approvals.tokens.models import ClientToken
from tests.fixtures.gateway import sdk_client
from tests.fixtures.waiting import a_minute_with_time_to_spare
from tests.gateway.conftest import Raw

REASONS = ("expired", "revoked", "replaced by rotation")


def refusal(mcp_url, secret) -> httpx.Response:
    client = Raw(mcp_url, secret)
    try:
        return client.modern("tools/list")
    finally:
        client.client.close()


def past(**delta):
    return timezone.now() - timedelta(**delta)


def expired(name):
    token, secret = create_token(name)
    ClientToken.objects.filter(pk=token.pk).update(expires_at=past(minutes=5))
    return secret


def revoked(name):
    token, secret = create_token(name)
    revoke_token(token)
    return secret


def rotated_out(name):
    token, secret = create_token(name)
    rotate_token(token, timedelta(0))
    return secret


@pytest.mark.parametrize(
    "make, reason", [(expired, "expired"), (revoked, "revoked"), (rotated_out, "replaced by rotation")]
)
def test_it_refuses_an_expired_revoked_or_rotated_out_token_with_401_saying_which(mcp_url, make, reason):
    response = refusal(mcp_url, make("ci-agent"))

    assert response.status_code == 401
    message = response.json()["error"]["message"]
    assert message.startswith("Unauthorized: the bearer token 'ci-agent'") and reason in message
    assert [r for r in REASONS if r in message] == [reason]
    challenge = response.headers["WWW-Authenticate"]
    assert 'error="invalid_token"' in challenge and reason in challenge


def test_it_says_when_the_token_expired(mcp_url):
    token, secret = create_token("ci-agent")
    ClientToken.objects.filter(pk=token.pk).update(
        expires_at=timezone.now().replace(microsecond=0) - timedelta(hours=2)
    )
    token.refresh_from_db()

    message = refusal(mcp_url, secret).json()["error"]["message"]

    assert f"expired at {token.expires_at.isoformat()}" in message


def test_it_takes_a_token_until_the_moment_it_expires(mcp_url):
    token, secret = create_token("ci-agent", expires_at=timezone.now() + timedelta(hours=1))

    assert refusal(mcp_url, secret).status_code == 200


def test_it_calls_an_unknown_secret_unknown(mcp_url):
    response = refusal(mcp_url, "mcpc_never-issued")

    assert response.status_code == 401
    assert response.json()["error"]["message"] == "Unauthorized: the bearer token is unknown"


async def test_it_keeps_the_old_secret_working_through_the_grace_period_beside_the_new_one(mcp_url, demo_server):
    token, old = await sync_to_async(create_token)("ci-agent")
    new = await sync_to_async(rotate_token)(token, timedelta(hours=1))

    for secret in (old, new):
        async with sdk_client(mcp_url, secret) as client:
            listed = await client.list_tools()
        assert "demo_lookup_customer" in {tool.name for tool in listed.tools}


def test_it_refuses_the_old_secret_once_the_grace_period_is_over(mcp_url):
    token, old = create_token("ci-agent")
    new = rotate_token(token, timedelta(hours=1))
    assert refusal(mcp_url, old).status_code == 200
    token.retired_secrets.update(valid_until=past(seconds=1))

    response = refusal(mcp_url, old)

    assert response.status_code == 401 and "replaced by rotation" in response.json()["error"]["message"]
    assert refusal(mcp_url, new).status_code == 200


def test_it_refuses_a_revoked_token_by_its_old_secret_too_as_revoked(mcp_url):
    token, old = create_token("ci-agent")
    rotate_token(token, timedelta(hours=1))
    revoke_token(token)

    assert "was revoked at" in refusal(mcp_url, old).json()["error"]["message"]


def test_it_notes_when_and_from_where_a_token_was_last_used(mcp_url):
    token, secret = create_token("ci-agent")

    assert refusal(mcp_url, secret).status_code == 200

    token.refresh_from_db()
    assert token.last_used_from == "127.0.0.1"
    assert timezone.now() - token.last_used_at < timedelta(minutes=1)


def test_it_writes_the_last_use_at_most_once_a_minute(mcp_url):
    token, secret = create_token("ci-agent")
    refusal(mcp_url, secret)
    ClientToken.objects.filter(pk=token.pk).update(last_used_from="10.0.0.9")

    refusal(mcp_url, secret)

    token.refresh_from_db()
    assert token.last_used_from == "10.0.0.9"


def test_it_holds_each_token_to_its_own_rate_and_others_to_the_global_one(mcp_url, settings):
    settings.MCP_RATE_LIMIT_PER_MINUTE = 100
    _, slow = create_token("slow", rate_per_minute=2)
    _, other = create_token("other")

    a_minute_with_time_to_spare()
    statuses = [refusal(mcp_url, slow).status_code for _ in range(3)]
    refused = refusal(mcp_url, slow)

    assert statuses == [200, 200, 429]
    assert refused.json()["error"]["message"] == "Too many requests: this token may make 2 requests a minute"
    assert 1 <= int(refused.headers["Retry-After"]) <= 60
    assert [refusal(mcp_url, other).status_code for _ in range(3)] == [200, 200, 200]
