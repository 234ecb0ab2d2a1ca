"""Thin celery tasks; the work lives in plain functions elsewhere."""

from celery import shared_task

from approvals.actions import mcp_sessions, revocation, verification
from approvals.audit import checkpoints, forwarding, retention
from approvals.calls import claims, ending
from approvals.catalog import connecting, sync
from approvals.catalog.models import Server
from approvals.db import sessions as browser_sessions
from approvals.inputs import requests
from approvals.oauth import grants, registrations
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
    return ending.expire_stale_calls() + revocation.cancel_calls_of_expired_tokens() + claims.escalate_due_calls()


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
    grants.prune_expired()
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
    forwarded = forwarding.forward()
    return forwarded.summary() if forwarded else "AUDIT_FORWARD_URL is not set."
