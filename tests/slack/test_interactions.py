"""Deciding a call from Slack: a signed click by a linked person, under exactly the queue's rules."""

import json
import time
from urllib.parse import urlencode

import pytest

from approvals.audit.models import AuditEvent
from approvals.calls.lifecycle import call_binding
from approvals.calls.models import Call
from approvals.policy.models import PolicyRule
from approvals.slack import linking
from approvals.slack.models import SlackLink
from tests.fixtures.people import make_user
from tests.slack.conftest import (
    SIGNING_SECRET,
    TEAM,
    ask_rule,
    buttons,
    click,
    held_call,
    interact,
    posted_message,
    signed,
)


@pytest.fixture
def posted(slack, client_token, refund_tool):
    """A call held under a rule that posts it, and the buttons of its message."""

    def post(**rule):
        ask_rule(slack_channel="#approvals", **rule)
        call = held_call(client_token, refund_tool)
        posted_message(call)
        return call, buttons(slack.sent("chat.postMessage")[-1])

    return post


def linked(username, slack_user, *roles):
    person = make_user(username, *(roles or ("operator",)))
    linking.link(person, TEAM, slack_user, username, SlackLink.How.ACCOUNT)
    return person


def status(call) -> str:
    return Call.objects.get(pk=call.pk).status


def test_it_approves_the_call_clicked_by_a_linked_operator(client, slack, posted):
    call, shown = posted()
    linked("ann", "U0ANN")
    answer = interact(client, click("approve", shown["approve"]["value"]))
    assert answer.status_code == 200
    call.refresh_from_db()
    assert call.status == Call.Status.APPROVED and call.decided_by_name == "ann"
    event = AuditEvent.objects.get(call_id=call.pk, action="call.approved")
    assert event.actor_name == "ann" and event.data["via"] == "slack" and event.data["device"] == f"{TEAM}:U0ANN"
    assert set(buttons(slack.saying("chat.update", "Approved by ann"))) == {"open"}
    assert slack.saying("chat.postEphemeral", "Approved.")["user"] == "U0ANN"


@pytest.mark.parametrize(
    "headers",
    [
        pytest.param({}, id="unsigned"),
        pytest.param(lambda body: signed(body, time.time(), secret="not-the-secret"), id="wrong-secret"),
        pytest.param(lambda body: signed(body, time.time() - 6 * 60), id="stale"),
        pytest.param(lambda body: signed(body, time.time() + 6 * 60), id="from-the-future"),
    ],
)
def test_it_refuses_an_unsigned_or_stale_interaction(client, slack, posted, headers):
    call, shown = posted()
    linked("ann", "U0ANN")
    payload = click("approve", shown["approve"]["value"])
    body = urlencode({"payload": json.dumps(payload)})
    answer = interact(client, payload, headers(body) if callable(headers) else headers)
    assert answer.status_code == 401
    assert status(call) == Call.Status.PENDING
    assert not AuditEvent.objects.filter(action__in=["call.approved", "slack.refused"]).exists()


def test_it_refuses_a_body_changed_after_signing(client, slack, posted):
    call, shown = posted()
    linked("ann", "U0ANN")
    body = urlencode({"payload": json.dumps(click("deny", shown["deny"]["value"]))})
    headers = signed(body, time.time())
    answer = interact(client, click("approve", shown["approve"]["value"]), headers)
    assert answer.status_code == 401 and status(call) == Call.Status.PENDING


def test_it_decides_nothing_for_an_unlinked_user_and_tells_them(client, slack, posted):
    call, shown = posted()
    answer = interact(client, click("approve", shown["approve"]["value"], user="U0EVE"))
    assert answer.status_code == 200 and status(call) == Call.Status.PENDING
    told = slack.saying("chat.postEphemeral", "not linked")
    assert told["user"] == "U0EVE" and "nothing was decided" in told["text"]
    refused = AuditEvent.objects.get(action="slack.refused")
    assert refused.call_id == call.pk and refused.data["slack_user"] == f"{TEAM}:U0EVE"


def test_a_quorum_of_two_needs_two_linked_people(client, slack, posted):
    call, shown = posted(approvals_needed=2)
    linked("ann", "U0ANN")
    linked("bob", "U0BOB")
    interact(client, click("approve", shown["approve"]["value"], user="U0ANN"))
    assert status(call) == Call.Status.PENDING
    assert "1 of 2 approvals: ann" in slack.saying("chat.postEphemeral", "waits for more")["text"]
    interact(client, click("approve", shown["approve"]["value"], user="U0ANN"))
    assert status(call) == Call.Status.PENDING
    slack.saying("chat.postEphemeral", "You approved already")
    interact(client, click("approve", shown["approve"]["value"], user="U0EVE"))
    assert status(call) == Call.Status.PENDING
    interact(client, click("approve", shown["approve"]["value"], user="U0BOB"))
    call.refresh_from_db()
    assert call.status == Call.Status.APPROVED and call.decided_by_name == "bob"
    assert AuditEvent.objects.get(call_id=call.pk, action="call.approved").data["approvals"] == ["ann", "bob"]
    slack.saying("chat.update", "Approved by ann, bob")


def test_it_refuses_a_click_on_a_message_whose_call_changed(client, slack, posted):
    call, shown = posted()
    linked("ann", "U0ANN")
    value = json.dumps({"call": call.pk, "binding": "0" * 64})
    interact(client, click("approve", value))
    assert status(call) == Call.Status.PENDING
    slack.saying("chat.postEphemeral", "changed since it was shown")
    assert json.loads(shown["approve"]["value"])["binding"] == call_binding(call)


def test_it_refuses_a_person_whose_role_may_not_decide(client, slack, posted):
    call, shown = posted()
    linked("audrey", "U0AUD", "auditor")
    interact(client, click("approve", shown["approve"]["value"], user="U0AUD"))
    assert status(call) == Call.Status.PENDING
    slack.saying("chat.postEphemeral", "may not decide calls")
    assert AuditEvent.objects.get(action="slack.refused").data["slack_user"] == f"{TEAM}:U0AUD"


def test_it_keeps_separation_of_duties(client, slack, posted, client_token):
    owner = linked("olga", "U0OLGA")
    client_token.owner = owner
    client_token.save()
    call, shown = posted(separation_of_duties=PolicyRule.SeparationOfDuties.REQUIRE)
    interact(client, click("approve", shown["approve"]["value"], user="U0OLGA"))
    assert status(call) == Call.Status.PENDING
    slack.saying("chat.postEphemeral", "separation of duties")


def test_it_tells_of_a_call_decided_first(client, slack, posted):
    call, shown = posted()
    linked("ann", "U0ANN")
    linked("bob", "U0BOB")
    interact(client, click("approve", shown["approve"]["value"], user="U0BOB"))
    interact(client, click("approve", shown["approve"]["value"], user="U0ANN"))
    assert Call.objects.get(pk=call.pk).decided_by_name == "bob"
    assert slack.saying("chat.postEphemeral", "Already approved by bob")["user"] == "U0ANN"


def test_deny_asks_a_reason_then_denies(client, slack, posted):
    call, shown = posted()
    linked("ann", "U0ANN")
    interact(client, click("deny", shown["deny"]["value"]))
    assert status(call) == Call.Status.PENDING
    [opened] = slack.sent("views.open")
    assert opened["trigger_id"] == "trigger-1" and opened["view"]["callback_id"] == "deny"
    submit = {
        "type": "view_submission",
        "team": {"id": TEAM},
        "user": {"id": "U0ANN", "username": "ann", "team_id": TEAM},
        "view": {**opened["view"], "state": {"values": {"reason": {"reason": {"value": ""}}}}},
    }
    answer = interact(client, submit)
    assert answer.json()["response_action"] == "errors" and status(call) == Call.Status.PENDING
    submit["view"]["state"]["values"]["reason"]["reason"]["value"] = "not this order"
    answer = interact(client, submit)
    assert answer.status_code == 200 and answer.content == b""
    call.refresh_from_db()
    assert (call.status, call.reason, call.decided_by_name) == (Call.Status.DENIED, "not this order", "ann")
    assert AuditEvent.objects.get(call_id=call.pk, action="call.denied").data["via"] == "slack"
    slack.saying("chat.update", "Denied by ann: not this order")


def test_it_answers_404_while_slack_is_not_set_up(client, settings, db):
    settings.SLACK_BOT_TOKEN = settings.SLACK_SIGNING_SECRET = ""
    body = urlencode({"payload": "{}"})
    answer = client.post(
        "/slack/interactions/", data=body, content_type="application/x-www-form-urlencoded", **signed(body, time.time())
    )
    assert answer.status_code == 404


def test_it_answers_400_to_a_signed_request_without_a_payload(client, slack):
    body = "token=x"
    headers = signed(body, time.time(), secret=SIGNING_SECRET)
    answer = client.post("/slack/interactions/", data=body, content_type="application/x-www-form-urlencoded", **headers)
    assert answer.status_code == 400
