"""Legacy-era sessions: opened by initialize, named by Mcp-Session-Id, ended by DELETE.

A session is a database row so that any web process can serve its next request; its pruning is
actions.mcp_sessions'.
It never authenticates anything: each request is authenticated by its token, and
a session answers only to the token that opened it.
"""

import secrets
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from approvals.actions.mcp_sessions import holder
from approvals.audit.chain import Actor
from approvals.calls import ending
from approvals.calls.models import Call
from approvals.db import kept as db_kept
from approvals.live import events
from approvals.tokens import credentials
from approvals.tokens.models import ClientToken, McpSession

# last_seen_at is written at most this often, so that a busy session does not make every request a write.
TOUCH_INTERVAL = timedelta(minutes=1)


class TooMany(Exception):
    """A token at its cap of sessions or subscriptions; the message says which, and what to do."""


@transaction.atomic
def open_session(token: ClientToken, protocol_version: str, client_info, capabilities) -> McpSession:
    """A new session of the token; TooMany when it holds MCP_MAX_SESSIONS_PER_TOKEN open already.

    The token's row is locked for the count, so that racing initializes see each other.
    """
    cap = settings.MCP_MAX_SESSIONS_PER_TOKEN
    if cap:
        ClientToken.objects.select_for_update().filter(pk=token.pk).first()
        if McpSession.objects.filter(token=token, closed_at__isnull=True).count() >= cap:
            raise TooMany(
                f"The token {token.name} holds {cap} open MCP sessions, the most it may "
                "(MCP_MAX_SESSIONS_PER_TOKEN): end those it no longer uses with DELETE, or reuse one."
            )
    return McpSession.objects.create(
        id=secrets.token_hex(32),
        token=token,
        protocol_version=protocol_version,
        client_info=client_info if isinstance(client_info, dict) else {},
        client_capabilities=capabilities if isinstance(capabilities, dict) else {},
    )


def find_open_session(token: ClientToken, session_id: str, kept: bool = False) -> McpSession | None:
    """The open session of this id and token; another token's session is as unknown as a made-up id.

    With `kept`, as db.kept keeps it, for a caller that has just refreshed the stamp.
    """

    def open_session_row():
        return McpSession.objects.filter(pk=session_id, token=token, closed_at__isnull=True).first()

    session = db_kept.load("session", (token.pk, session_id), open_session_row, kept=kept)
    if session is not None and due_for_touch(session):
        session.last_seen_at = timezone.now()
        McpSession.objects.filter(pk=session.pk).update(last_seen_at=session.last_seen_at)
    return session


def kept_session(token: ClientToken, session_id: str) -> McpSession | None:
    """find_open_session's answer without a query, when db.kept has it and it need not be touched."""
    session = db_kept.peek("session", (token.pk, session_id))
    return None if session is None or due_for_touch(session) else session


def due_for_touch(session: McpSession) -> bool:
    return timezone.now() - session.last_seen_at > TOUCH_INTERVAL


def is_open(session_id: str) -> bool:
    """Whether the session may still receive notifications: not ended, and its token neither revoked nor expired."""
    token_id = McpSession.objects.filter(pk=session_id, closed_at__isnull=True).values_list("token_id", flat=True)
    return credentials.still_valid(token_id.first())


def mark_initialized(session: McpSession):
    McpSession.objects.filter(pk=session.pk).update(initialized=True)


def set_log_level(session: McpSession, level: str):
    McpSession.objects.filter(pk=session.pk).update(log_level=level)


def subscriptions(session_id: str) -> list[str]:
    return McpSession.objects.filter(pk=session_id).values_list("resource_subscriptions", flat=True).first() or []


def token_subscriptions(token_id) -> int:
    """The resource subscriptions the token's open sessions hold."""
    held = McpSession.objects.filter(token_id=token_id, closed_at__isnull=True).exclude(resource_subscriptions=[])
    return sum(len(uris) for uris in held.values_list("resource_subscriptions", flat=True))


@transaction.atomic
def add_subscription(session_id: str, uri: str, most: int, elsewhere: int = 0) -> bool:
    """Keep the subscription in the session's row, before it is made upstream; whether it is new.

    TooMany past `most` for the session, or past the token's cap counting `elsewhere` (its listen
    streams' in this process) beside its sessions'. The token's row is locked for the count.
    """
    session = McpSession.objects.select_for_update().filter(pk=session_id).first()
    if session is None or uri in session.resource_subscriptions:
        return False
    if len(session.resource_subscriptions) >= most:
        raise TooMany(f"A session may hold at most {most} subscriptions")
    cap = settings.MCP_MAX_SUBSCRIPTIONS_PER_TOKEN
    if cap:
        ClientToken.objects.select_for_update().filter(pk=session.token_id).first()
        if token_subscriptions(session.token_id) + elsewhere >= cap:
            raise TooMany(subscriptions_refusal(cap))
    session.resource_subscriptions = [*session.resource_subscriptions, uri]
    session.save(update_fields=["resource_subscriptions"])
    return True


@transaction.atomic
def remove_subscription(session_id: str, uri: str):
    """Forget the subscription; whichever process subscribed upstream for it lets go there."""
    session = McpSession.objects.select_for_update().filter(pk=session_id).first()
    if session is not None and uri in session.resource_subscriptions:
        session.resource_subscriptions = [u for u in session.resource_subscriptions if u != uri]
        session.save(update_fields=["resource_subscriptions"])
    events.subscriptions_released(holder(session_id), uri)


def subscriber(session_id: str, uri: str) -> McpSession | None:
    """The session, its token with it, while it is open and subscribed to `uri`."""
    session = McpSession.objects.select_related("token").filter(pk=session_id, closed_at__isnull=True).first()
    return session if session is not None and uri in session.resource_subscriptions else None


def subscriptions_refusal(cap: int) -> str:
    return (
        f"This token holds {cap} resource subscriptions across its sessions and listen streams, the most it may "
        "(MCP_MAX_SUBSCRIPTIONS_PER_TOKEN): unsubscribe from some first."
    )


def close_session(session: McpSession):
    """End the session; calls it still has running end with it, as the client has said it is gone.

    Its tasks go on: a task belongs to its token, to be polled from the client's next session (calls.tasks).
    """
    McpSession.objects.filter(pk=session.pk, closed_at__isnull=True).update(closed_at=timezone.now())
    events.subscriptions_released(holder(session.pk))
    running = Call.objects.filter(session_id=session.pk, status__in=Call.OPEN, task_id__isnull=True)
    running = running.values_list("pk", flat=True)
    for call_id in list(running):
        ending.cancel_running(call_id, "the client ended its session", Actor.client(session.token))
