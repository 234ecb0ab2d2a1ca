"""Thin celery tasks; the work lives in plain functions elsewhere."""

from celery import shared_task

from approvals.actions import mcp_sessions, notify, revocation, verification
from approvals.audit import checkpoints, retention, siem_forwarding
from approvals.calls import expiry
from approvals.catalog import sync
from approvals.catalog.models import Server
from approvals.db import sessions as browser_sessions
from approvals.inputs import requests
from approvals.oauth import consent_tokens, registrations
from approvals.slack import messages
from approvals.upstream_oauth import connecting
from approvals.webhooks import sending


@shared_task
def sync_server(server_id):
    server = Server.objects.filter(pk=server_id, enabled=True).first()
    if server is not None:
        return sync.sync_server(server).summary()
    return None


@shared_task
def sync_all_servers():
    return [sync.sync_server(server).summary() for server in Server.objects.filter(enabled=True)]


@shared_task
def expire_stale_calls():
    return expiry.expire_stale_calls() + revocation.cancel_calls_of_expired_tokens() + expiry.escalate_due_calls()


@shared_task
def notify_call(call_id, event):
    return notify.call_waits(call_id, event)


@shared_task
def notify_input(input_id):
    return notify.input_waits(input_id)


@shared_task
def expire_stale_inputs():
    return requests.expire_stale_requests()


@shared_task
def verify_audit_chain(run_by="schedule"):
    return verification.run(run_by).ok


@shared_task
def checkpoint_audit():
    checkpoint = checkpoints.take()
    return checkpoint.seq if checkpoint else None


@shared_task
def prune_audit():
    pruned = retention.prune()
    return pruned.summary() if pruned else "Events are kept forever."


@shared_task
def prune_sessions():
    """Legacy MCP sessions idle for a day, and browser sessions past their expiry."""
    browser_sessions.SessionStore.clear_expired()
    return mcp_sessions.prune_sessions()


@shared_task
def prune_oauth():
    consent_tokens.prune_expired()
    registrations.prune_unused()
    connecting.prune_flows()


@shared_task
def deliver_webhook(delivery_id, requested_by=""):
    attempt = sending.deliver(delivery_id, requested_by)
    return attempt.error or attempt.status_code if attempt else None


@shared_task
def send_due_webhooks():
    return sending.send_due()


@shared_task
def forward_audit():
    forwarded = siem_forwarding.forward()
    return forwarded.summary() if forwarded else "AUDIT_FORWARD_URL is not set."


@shared_task
def slack_post(message_id):
    return messages.post(message_id)


@shared_task
def slack_post_due():
    return messages.post_due()


@shared_task
def slack_update(call_id):
    return messages.update(call_id)


@shared_task
def slack_tell(channel, user, text):
    return messages.tell(channel, user, text)
