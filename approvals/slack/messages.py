"""A waiting call's Slack message: posted once the call is held, updated in place as it is decided or ends.

The announcement of a call's change (approvals/actions/announce) calls call_changed inside the change's transaction;
the Web API is called after commit, off the call's path (db/after_commit.soon), by the tasks that run post, update
and tell. Each renders the call as it stands when it runs, so a late update still shows the latest state. A post
that fails is tried again by post_due, on the periodic schedule.
"""

import logging
from datetime import timedelta

from django.conf import settings
from django.db.models import F, Q
from django.utils import timezone

from approvals.calls.models import Call
from approvals.db import after_commit
from approvals.slack import blocks, transport
from approvals.slack.models import SlackMessage

log = logging.getLogger(__name__)

# How often a post is tried, and how many due ones one sweep tries: Slack allows about one message a second.
POST_ATTEMPTS = 5
DUE_AT_ONCE = 30
# The events after which a posted message no longer says what the call is: an approval toward a quorum (which
# may carry an edit), a decision, and an end without one.
UPDATED_BY = {"call.approval", "call.decided"}


def channel_for(call: Call) -> str:
    """The channel of the rule that held the call, else of its server's; "" when neither names one."""
    rule_channel = call.rule.slack_channel if call.rule_id and call.rule else ""
    return rule_channel or (call.server.slack_channel if call.server_id and call.server else "")


def call_changed(call: Call, event: str):
    """Post the call when it is held, update its message when it moves on; nothing while Slack is not set up."""
    if not transport.configured():
        return
    if event == "call.pending":
        channel = channel_for(call)
        if channel:
            message, _ = SlackMessage.objects.get_or_create(call=call, defaults={"channel": channel})
            after_commit.soon("approvals.tasks.slack_post", message.pk)
    elif moved_on(call, event) and SlackMessage.objects.filter(call_id=call.pk).exists():
        after_commit.soon("approvals.tasks.slack_update", call.pk)


def moved_on(call: Call, event: str) -> bool:
    return event in UPDATED_BY or call.status in Call.CUT_SHORT


def shown_call(call_id) -> Call:
    return Call.objects.select_related("token", "server").get(pk=call_id)


def post(message_id: int) -> str:
    """Post the message; Slack's error, or ""."""
    message = SlackMessage.objects.filter(pk=message_id, ts="").first()
    if message is None:
        return ""
    tried = {"attempts": F("attempts") + 1, "tried_at": timezone.now(), "error": ""}
    SlackMessage.objects.filter(pk=message.pk).update(**tried)
    text, shown, binding = blocks.message(shown_call(message.call_id))
    try:
        answer = transport.call("chat.postMessage", {"channel": message.channel, "text": text, "blocks": shown})
    except transport.SlackError as exc:
        log.warning("call %s could not be posted to Slack: %s", message.call_id, exc.message)
        SlackMessage.objects.filter(pk=message.pk).update(error=exc.message)
        return exc.message
    channel, ts = answer.get("channel") or message.channel, str(answer.get("ts", ""))
    SlackMessage.objects.filter(pk=message.pk).update(channel=channel, ts=ts, binding=binding, error="")
    # The call may have moved on while it was posted, when its message had no ts to update yet.
    if blocks.message(shown_call(message.call_id))[:2] != (text, shown):
        return update(message.call_id)
    return ""


def post_due() -> int:
    """Post again, while their call waits, the messages Slack refused and those whose attempt was lost with its
    process; each at most POST_ATTEMPTS times. Run on the periodic schedule."""
    lost = timezone.now() - timedelta(seconds=2 * settings.SLACK_TIMEOUT_SECONDS + 30)
    unfinished = Q(error__gt="") | Q(tried_at__lt=lost) | Q(tried_at=None, created_at__lt=lost)
    due = SlackMessage.objects.filter(unfinished, ts="", attempts__lt=POST_ATTEMPTS, call__status=Call.Status.PENDING)
    ids = list(due.order_by("pk").values_list("pk", flat=True)[:DUE_AT_ONCE])
    for message_id in ids:
        post(message_id)
    return len(ids)


def update(call_id: int) -> str:
    """Show the call as it stands in its posted message; Slack's error, or ""."""
    message = SlackMessage.objects.filter(call_id=call_id).exclude(ts="").first()
    if message is None:
        return ""
    text, shown, binding = blocks.message(shown_call(call_id))
    fields = {"channel": message.channel, "ts": message.ts, "text": text, "blocks": shown}
    try:
        transport.call("chat.update", fields)
    except transport.SlackError as exc:
        log.warning("the Slack message of call %s could not be updated: %s", call_id, exc.message)
        SlackMessage.objects.filter(pk=message.pk).update(error=exc.message)
        return exc.message
    SlackMessage.objects.filter(pk=message.pk).update(binding=binding, error="", updated_at=timezone.now())
    return ""


def tell(channel: str, user: str, text: str) -> str:
    """A message only this Slack user sees, in the channel they clicked in; Slack's error, or ""."""
    try:
        transport.call("chat.postEphemeral", {"channel": channel, "user": user, "text": text})
    except transport.SlackError as exc:
        log.warning("a Slack user could not be told what became of their click: %s", exc.message)
        return exc.message
    return ""


def tell_soon(channel: str, user: str, text: str):
    after_commit.soon("approvals.tasks.slack_tell", channel, user, text)
