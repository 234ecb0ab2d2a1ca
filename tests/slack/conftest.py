"""A fake Slack Web API for the console to post to, and Slack's signed interactions to click with."""

import hashlib
import hmac
import json
import time
from urllib.parse import urlencode

import pytest
from django.urls import reverse

from approvals.calls import lifecycle
from approvals.calls.models import Call
from approvals.policy import rules
from approvals.protocol import revisions
from approvals.slack.models import SlackMessage
from approvals.tokens.context import ClientContext
from tests.fixtures.waiting import wait_until
from tests.slack.fake_slack import CHANNEL_ID, TOKEN, FakeSlack

SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
CONSOLE_URL = "https://console.example.com"
TEAM = "T0TEAM"
ARGUMENTS = {"order_id": 7, "amount": 20}


@pytest.fixture
def slack(settings, transactional_db):
    """The fake Slack, and the console set up to use it; a message's posting has finished when the test ends."""
    fake = FakeSlack()
    settings.SLACK_BOT_TOKEN, settings.SLACK_SIGNING_SECRET = TOKEN, SIGNING_SECRET
    settings.SLACK_API_URL, settings.CONSOLE_URL = fake.url, CONSOLE_URL
    yield fake
    wait_until(lambda: not SlackMessage.objects.filter(ts="", error="").exists(), timeout=20, message="messages posted")
    fake.close()


def ask_rule(**fields):
    return rules.create_rule(rules.RuleRequest("ask", **{"tool_glob": "*", "name": "ask", **fields}))


def held_call(token, tool, arguments=ARGUMENTS) -> Call:
    call, answer = lifecycle.receive_call(
        ClientContext(token, revisions.MODERN, "2026-07-28"), tool, arguments, 1, None
    )
    assert answer is None and call.status == Call.Status.PENDING
    return call


def posted_message(call: Call) -> SlackMessage:
    """The call's message once Slack has taken it (its ts kept), for a test to act on what was posted."""
    return wait_until(lambda: SlackMessage.objects.filter(call=call).exclude(ts="").first(), message="the post kept")


def buttons(posted: dict) -> dict:
    """The posted message's buttons by action id."""
    actions = [block for block in posted["blocks"] if block["type"] == "actions"]
    return {button["action_id"]: button for block in actions for button in block["elements"]}


def click(action: str, value: str, user: str = "U0ANN", team: str = TEAM) -> dict:
    return {
        "type": "block_actions",
        "team": {"id": team},
        "user": {"id": user, "username": user.lower(), "team_id": team},
        "channel": {"id": CHANNEL_ID},
        "container": {"type": "message", "message_ts": "1700000000.000001", "channel_id": CHANNEL_ID},
        "trigger_id": "trigger-1",
        "actions": [{"action_id": action, "value": value, "type": "button", "block_id": "call"}],
    }


def signed(body: str, at: float, secret: str = SIGNING_SECRET) -> dict:
    stamp = str(int(at))
    digest = hmac.new(secret.encode(), f"v0:{stamp}:{body}".encode(), hashlib.sha256).hexdigest()
    return {"HTTP_X_SLACK_REQUEST_TIMESTAMP": stamp, "HTTP_X_SLACK_SIGNATURE": f"v0={digest}"}


def interact(client, payload: dict, headers: dict | None = None):
    """POSTs the payload as Slack does, signed now unless `headers` say otherwise."""
    body = urlencode({"payload": json.dumps(payload)})
    headers = signed(body, time.time()) if headers is None else headers
    return client.post(
        reverse("slack_interactions"), data=body, content_type="application/x-www-form-urlencoded", **headers
    )
