"""A waiting call posted to Slack, and its message updated in place however the call is decided."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from approvals.calls import deciding, expiry
from approvals.calls.lifecycle import call_binding
from approvals.calls.models import Call
from approvals.slack import messages
from approvals.slack.blocks import read_value
from approvals.slack.models import SlackMessage
from console.celery import app
from tests.fixtures.processes import celery_worker
from tests.fixtures.waiting import wait_until
from tests.slack.conftest import CONSOLE_URL, SIGNING_SECRET, ask_rule, buttons, held_call, posted_message
from tests.slack.fake_slack import CHANNEL_ID, TOKEN


def test_it_posts_a_waiting_call_with_approve_deny_and_open(slack, client_token, refund_tool):
    ask_rule(slack_channel="#approvals")
    call = held_call(client_token, refund_tool, {"order_id": 7, "amount": 20, "api_token": "sk-live-123"})
    [posted] = slack.sent("chat.postMessage")
    assert posted["channel"] == "#approvals" and "shop_issue_refund" in posted["text"]
    shown = buttons(posted)
    assert [shown[name]["text"]["text"] for name in ("approve", "deny", "open")] == ["Approve", "Deny", "Open"]
    assert read_value(shown["approve"]["value"]) == (call.pk, call_binding(call))
    assert read_value(shown["deny"]["value"]) == (call.pk, call_binding(call))
    assert shown["open"]["url"] == CONSOLE_URL + reverse("call", args=[call.pk])
    section = posted["blocks"][0]["text"]["text"]
    assert "`amount`: 20" in section and "sk-live-123" not in section
    message = posted_message(call)
    assert message.channel == CHANNEL_ID and message.binding == call_binding(call)


def test_the_call_is_held_and_decided_while_slack_has_not_answered_its_post(
    slack, client_token, refund_tool, operators
):
    slack.hang = True
    try:
        ask_rule(slack_channel="#approvals")
        call = held_call(client_token, refund_tool)
        slack.sent("chat.postMessage")
        assert deciding.decide(call.pk, operators[0], True).won
        assert SlackMessage.objects.get(call=call).ts == ""
    finally:
        slack.released.set()
    posted_message(call)
    slack.saying("chat.update", "Approved by ann")


def test_it_posts_to_the_rules_channel_over_the_servers(slack, client_token, refund_tool, shop):
    shop.slack_channel = "#shop"
    shop.save()
    ask_rule(slack_channel="#refunds", tool_glob="shop_issue_refund")
    ask_rule(tool_glob="*")
    held_call(client_token, refund_tool)
    assert slack.sent("chat.postMessage")[0]["channel"] == "#refunds"


def test_it_posts_to_the_servers_channel_when_the_rule_names_none(slack, client_token, refund_tool, shop):
    shop.slack_channel = "#shop"
    shop.save()
    ask_rule()
    held_call(client_token, refund_tool)
    assert slack.sent("chat.postMessage")[0]["channel"] == "#shop"


def test_it_posts_nothing_without_a_channel_or_without_slack(slack, settings, client_token, refund_tool):
    ask_rule()
    first = held_call(client_token, refund_tool)
    settings.SLACK_BOT_TOKEN = settings.SLACK_SIGNING_SECRET = ""
    ask_rule(slack_channel="#approvals", tool_glob="shop_*", position=1)
    second = held_call(client_token, refund_tool)
    assert not SlackMessage.objects.filter(call__in=[first, second]).exists()
    assert slack.calls == []


def test_it_updates_the_message_when_an_operator_decides_in_the_queue(slack, client_token, refund_tool, person):
    ask_rule(slack_channel="#approvals")
    call = held_call(client_token, refund_tool)
    posted = slack.sent("chat.postMessage")[0]
    posted_message(call)
    _, browser = person("queue-ann", "operator")
    answer = browser.post(
        reverse("call_decide", args=[call.pk]),
        {"decision": "deny", "reason": "wrong order", "binding": call_binding(call)},
    )
    assert answer.status_code == 302
    updated = slack.saying("chat.update", "Denied by queue-ann: wrong order")
    message = SlackMessage.objects.get(call=call)
    assert (updated["channel"], updated["ts"]) == (CHANNEL_ID, message.ts)
    assert set(buttons(updated)) == {"open"} and buttons(posted).keys() == {"approve", "deny", "open"}


def test_it_updates_the_message_when_the_call_expires(slack, client_token, refund_tool):
    ask_rule(slack_channel="#approvals")
    call = held_call(client_token, refund_tool)
    posted_message(call)
    Call.objects.filter(pk=call.pk).update(expires_at=call.received_at)
    expiry.expire_stale_calls()
    updated = slack.saying("chat.update", "Expired")
    assert set(buttons(updated)) == {"open"}


def test_it_shows_each_approval_of_a_quorum(slack, client_token, refund_tool, operators):
    ann, _ = operators
    ask_rule(slack_channel="#approvals", approvals_needed=2)
    call = held_call(client_token, refund_tool)
    posted_message(call)
    deciding.decide(call.pk, ann, True, via="api")
    updated = slack.saying("chat.update", "1 of 2 approvals: ann")
    assert {"approve", "deny"} <= set(buttons(updated))


def test_it_keeps_slacks_refusal_of_a_post(slack, client_token, refund_tool, settings):
    settings.SLACK_BOT_TOKEN = "xoxb-revoked"
    ask_rule(slack_channel="#approvals")
    call = held_call(client_token, refund_tool)
    message = wait_until(lambda: SlackMessage.objects.filter(call=call).exclude(error="").first())
    assert "invalid_auth" in message.error and message.ts == ""
    assert Call.objects.get(pk=call.pk).status == Call.Status.PENDING


@pytest.mark.postgres
@pytest.mark.redis
def test_a_celery_worker_posts_the_message_off_the_calls_path(slack, client_token, refund_tool):
    env = {
        "SLACK_BOT_TOKEN": TOKEN,
        "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "SLACK_API_URL": slack.url,
        "CONSOLE_URL": CONSOLE_URL,
    }
    with celery_worker(env):
        app.conf.task_always_eager = False
        try:
            ask_rule(slack_channel="#approvals")
            call = held_call(client_token, refund_tool)
            assert read_value(buttons(slack.sent("chat.postMessage")[0])["approve"]["value"])[0] == call.pk
            assert posted_message(call).channel == CHANNEL_ID
        finally:
            app.conf.task_always_eager = True


RATE_LIMITED = (429, {"ok": False, "error": "ratelimited"})


def test_it_posts_again_a_message_slack_refused_while_its_call_waits(slack, client_token, refund_tool):
    slack.refusals["chat.postMessage"] = [RATE_LIMITED]
    ask_rule(slack_channel="#approvals")
    call = held_call(client_token, refund_tool)
    refused = wait_until(lambda: SlackMessage.objects.filter(call=call).exclude(error="").first())
    assert "answered 429" in refused.error and refused.attempts == 1
    assert messages.post_due() == 1
    message = posted_message(call)
    assert message.attempts == 2 and message.error == "" and len(slack.made("chat.postMessage")) == 1
    assert messages.post_due() == 0


def test_it_stops_posting_again_once_the_call_is_decided_or_the_attempts_run_out(
    slack, client_token, refund_tool, operators
):
    slack.refusals["chat.postMessage"] = [(200, {"ok": False, "error": "channel_not_found"})] * 2
    ask_rule(slack_channel="#nowhere")
    tried_out, decided = held_call(client_token, refund_tool), held_call(client_token, refund_tool)
    wait_until(lambda: SlackMessage.objects.exclude(error="").count() == 2)
    SlackMessage.objects.filter(call=tried_out).update(attempts=messages.POST_ATTEMPTS)
    deciding.decide(decided.pk, operators[0], True)
    assert messages.post_due() == 0 and slack.made("chat.postMessage") == []


def test_it_posts_a_message_whose_attempt_was_lost_with_its_process(slack, client_token, refund_tool, settings):
    settings.SLACK_BOT_TOKEN = settings.SLACK_SIGNING_SECRET = ""
    call = held_call(client_token, refund_tool)
    settings.SLACK_BOT_TOKEN, settings.SLACK_SIGNING_SECRET = TOKEN, SIGNING_SECRET
    lost = timezone.now() - timedelta(minutes=5)
    SlackMessage.objects.create(call=call, channel="#approvals", attempts=1, tried_at=lost, created_at=lost)
    assert messages.post_due() == 1
    assert posted_message(call).attempts == 2
