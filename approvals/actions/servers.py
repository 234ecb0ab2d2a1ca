"""Adding, changing, retiring and deleting upstream servers: each function changes data, then schedules what follows.

Retiring a server cancels its calls waiting to run (approvals.calls.ending), which is why
these live above the catalog and the calls.
"""

import copy

from django.db import transaction

from approvals.audit import chain
from approvals.audit.chain import SYSTEM
from approvals.audit.snapshots import snapshot
from approvals.calls import ending
from approvals.calls.models import Call
from approvals.catalog import sync
from approvals.catalog.models import Server
from approvals.live import events
from approvals.upstream_oauth import registering

# What the audit log may show of a server; headers and env are credentials, so
# only the names of those that changed are recorded.
AUDITED_FIELDS = [
    "name",
    "transport",
    "url",
    "command",
    "trusted",
    "enabled",
    "tool_prefix",
    "input_routing",
    "changes",
    "oauth",
    "connection",
    "resource_indicator",
    "slack_channel",
]


@transaction.atomic
def add_server(
    *,
    name,
    transport,
    url="",
    command="",
    headers=None,
    env=None,
    trusted=False,
    enabled=True,
    tool_prefix=None,
    input_routing=Server.InputRouting.OPERATOR,
    slack_channel="",
    changes=Server.Changes.REVIEW,
    accept_tools=False,
    schedule_sync=True,
    actor=SYSTEM,
    oauth=Server.OAuth.NONE,
    connection=Server.Connection.SHARED,
    resource_indicator=True,
    client_id="",
    client_secret="",
    private_key="",
):
    """A new server; its first tools await review unless `accept_tools` accepts them all unread.

    `client_id` (with `client_secret` or a PEM `private_key`) are credentials its authorization server issued
    the console (pre-registration); `oauth` says whether a person consents (Connect) or the client credentials
    grant runs alone."""
    server = Server(
        name=name,
        transport=transport,
        url=url,
        command=command,
        headers=headers or {},
        env=env or {},
        trusted=trusted,
        enabled=enabled,
        input_routing=input_routing,
        slack_channel=slack_channel,
        changes=changes,
        accept_next_listing=accept_tools,
        oauth=Server.OAuth.AUTHORIZATION_CODE if client_id and oauth == Server.OAuth.NONE else oauth,
        connection=connection,
        resource_indicator=resource_indicator,
    )
    server.save()
    server.tool_prefix = Server.default_prefix(server.slug) if tool_prefix is None else tool_prefix
    server.save(update_fields=["tool_prefix"])
    data = snapshot(server, [*AUDITED_FIELDS, *Server.SECRET_FIELDS], secrets=Server.SECRET_FIELDS)
    data["accept_tools"] = accept_tools
    if client_id:
        registering.preregister(server, client_id, client_secret, private_key)
        data |= {"client_id": client_id, "client_secret": bool(client_secret), "private_key": bool(private_key)}
    chain.record("server.added", actor, server=server, data=data)
    if server.enabled and schedule_sync:
        sync.enqueue_sync(server)
    return server


# Changing any of these makes the server another endpoint: what was open or waiting for the old one ends.
RECONNECT_FIELDS = {"transport", "url", "command", "headers", "env"}


@transaction.atomic
def update_server(server, actor=SYSTEM, **changes):
    credentials = {k: changes.pop(k) for k in ("client_id", "client_secret", "private_key") if k in changes}
    if credentials.get("client_id"):
        registering.preregister(server, **credentials)
        named = {"client_id": credentials["client_id"], "client_secret": bool(credentials.get("client_secret"))}
        chain.record("server.oauth_client_changed", actor, server=server, data=named)
    changed = {k for k, v in changes.items() if getattr(server, k) != v}
    before_changes = copy.copy(server)
    audited = [field for field in AUDITED_FIELDS if field in changed]
    before = snapshot(server, audited)
    secrets_changed = {
        field: changed_names(getattr(server, field), changes[field])
        for field in Server.SECRET_FIELDS
        if field in changed
    }
    for key, value in changes.items():
        setattr(server, key, value)
    if changed:
        after = snapshot(server, audited)
        chain.record("server.changed", actor, server=server, data={"before": before, "after": after, **secrets_changed})
    if "trusted" in changed:
        chain.record(
            "server.trusted" if server.trusted else "server.untrusted",
            actor,
            server=server,
            data={"trusted": server.trusted},
        )
    forget_era(before_changes, server)
    server.save()
    follow_change(before_changes, server, actor)
    return server


def reconnects(before: Server, after: Server) -> bool:
    """Whether the change makes the server another endpoint: what was open or waiting for the old one ends."""
    return any(getattr(before, name) != getattr(after, name) for name in RECONNECT_FIELDS)


def forget_era(before: Server, after: Server) -> None:
    """Before `after` is saved: a new endpoint may speak another era, so it is negotiated afresh."""
    if reconnects(before, after):
        after.revision = ""


def follow_change(before: Server, after: Server, actor) -> None:
    """What a saved change of a server sets going, on the console's form and in Django's admin alike: the server as
    it was retired, and a sync whose listing goes through review like any other, with clients told of it.
    """
    if why := why_retired(before, after):
        retire(before, actor, why)
    prefixed = before.tool_prefix != after.tool_prefix
    enabled = after.enabled and not before.enabled
    resync = (
        reconnects(before, after)
        or prefixed
        or enabled
        # Tools awaiting review are accepted by the next sync.
        or (before.changes != after.changes and after.changes == Server.Changes.ACCEPT)
    )
    if resync and after.enabled:
        sync.enqueue_sync(after)
    if before.enabled != after.enabled or prefixed:
        # The tools clients see changed even before any sync: tell their streams.
        events.catalog_changed(after.pk)


def why_retired(before: Server, after: Server) -> str:
    """Why the server as it was must be retired, or '' when its change leaves sessions and calls as they are."""
    if before.enabled and not after.enabled:
        return "its server was disabled"
    if reconnects(before, after):
        return "its server's endpoint changed"
    return ""


def retire(server, actor, why: str) -> int:
    """Close every process's sessions to the server as it was, and cancel its calls still waiting to run.

    A pending or approved call was asked for, or cleared, against the server as it was: none of them
    runs against what it became. Each cancellation goes through the calls' conditional move (audited,
    the waiting client answered, the queue row pushed), so a decision racing it either wins first or
    finds the call cancelled. Returns how many calls were cancelled.
    """
    waiting = Call.objects.filter(server=server, status__in=Call.WAITING_TO_RUN)
    reason = f"{why} before the call ran"
    cancelled = sum(
        ending.end_call(pk, Call.WAITING_TO_RUN, Call.Status.CANCELLED, reason, actor)
        for pk in list(waiting.values_list("pk", flat=True))
    )
    events.upstream_retired(server.name)
    return cancelled


@transaction.atomic
def delete_server(server, actor=SYSTEM):
    """Retire the server, then delete it with its tools; its calls stay, as the record of what happened."""
    retire(server, actor, "its server was deleted")
    server.delete()


def changed_names(before: dict, after: dict) -> list:
    return sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
