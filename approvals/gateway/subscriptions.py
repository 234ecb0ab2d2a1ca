"""Resource subscriptions and change notifications, for clients of either era.

A legacy client subscribes by `resources/subscribe` within its session (kept in
the session's row, so that any process serves its next request) and hears the
updates, and the lists' changes, on its GET stream. A 2026-07-28 client names
what it wants in a `subscriptions/listen` request, whose answer is the stream.

Either way the console subscribes upstream, on the pooled session of the server
the URI routes to, in the process that took the request; the pool holds the
subscription for each holder (a session, a listen stream) and lets go upstream
when the last one does, which any process may announce. An update reaches the
channel layer from the process that hears it, so a subscriber's stream passes it
on wherever it is held.
"""

import uuid
from collections import Counter

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import transaction

from approvals.actions.mcp_sessions import holder
from approvals.calls import reads
from approvals.calls.models import Call
from approvals.calls.upstream_sessions import session_pool
from approvals.catalog import routes
from approvals.catalog.specs import upstream_spec
from approvals.gateway import sessions, streams
from approvals.gateway.resources_prompts import (
    audited,
    clipped,
    failure,
    record_unknown,
    resource_not_found,
    uri_param,
)
from approvals.live.events import LISTS
from approvals.protocol import jsonrpc
from approvals.protocol.jsonrpc import INVALID_PARAMS, JsonRpcError
from approvals.protocol.revisions import LEGACY, META_SUBSCRIPTION_ID
from approvals.tokens import credentials
from approvals.tokens.context import ClientContext
from approvals.upstream import UpstreamError

# Per session or listen stream: each is a subscription held upstream. A token's across them all is
# MCP_MAX_SUBSCRIPTIONS_PER_TOKEN: its sessions' by their rows, its listen streams' as this process holds them.
MAX_SUBSCRIPTIONS = 100
LISTENING: Counter = Counter()  # token id: the subscriptions its listen streams hold in this process
# A listen filter's flag for each list, and the capability that must be offered for it to be honoured.
LIST_FLAGS = {"toolsListChanged": "tools", "resourcesListChanged": "resources", "promptsListChanged": "prompts"}


def offers_subscriptions(capabilities) -> bool:
    resources = capabilities.get("resources") if isinstance(capabilities, dict) else None
    return isinstance(resources, dict) and resources.get("subscribe") is True


def list_changed(name: str, meta: dict | None = None) -> dict:
    return jsonrpc.notification(f"notifications/{name}/list_changed", {"_meta": meta} if meta else None)


async def subscribe_upstream(ctx: ClientContext, uri: str, holder: str) -> str:
    """Subscribe to `uri` upstream for `holder`, audited; the name of the server that holds it."""
    route = await sync_to_async(routes.resource_route)(ctx.token, uri)
    if route is None:
        await record_unknown("resource.subscribed", ctx, {"uri": clipped(uri)})
        raise resource_not_found(ctx, uri)
    server = route.server
    if not offers_subscriptions(server.capabilities):
        raise JsonRpcError(INVALID_PARAMS, f"The server {server.name} offers no subscriptions to its resources")

    def refusal(message):
        return JsonRpcError(resource_not_found(ctx, uri).code, message, {"uri": uri})

    read = reads.Read(Call.Kind.RESOURCE, server, uri, {"uri": uri}, route.served_digest)

    async def answer():
        refused = await sync_to_async(reads.refused_beside_the_read)(ctx.token, [read], f"A subscription to {uri}")
        if refused is not None:
            raise refused
        try:
            await session_pool().subscribe(upstream_spec(server), uri, holder)
        except UpstreamError as exc:
            raise failure(server, "resources/subscribe", exc, refusal) from None
        return {}

    await audited("resource.subscribed", ctx, server, {"uri": clipped(uri), "via": route.exposed_name}, answer)
    return server.name


async def subscribe_in_session(ctx: ClientContext, params: dict) -> dict:
    """Kept in the session's row first, within the caps, then made upstream; kept only if that succeeds."""
    uri = uri_param(params, "uri", "resources/subscribe")
    try:
        added = await sync_to_async(sessions.add_subscription)(
            ctx.session_id, uri, MAX_SUBSCRIPTIONS, LISTENING[ctx.token.pk]
        )
    except sessions.TooMany as exc:
        raise JsonRpcError(INVALID_PARAMS, str(exc)) from None
    try:
        await subscribe_upstream(ctx, uri, holder(ctx.session_id))
    except BaseException:
        if added:
            await sync_to_async(sessions.remove_subscription)(ctx.session_id, uri)
        raise
    return {}


async def unsubscribe_in_session(ctx: ClientContext, params: dict) -> dict:
    uri = uri_param(params, "uri", "resources/unsubscribe")

    async def answer():
        await sync_to_async(sessions.remove_subscription)(ctx.session_id, uri)
        return {}

    return await audited("resource.unsubscribed", ctx, None, {"uri": clipped(uri)}, answer)


def update_refused(token, server_name: str, uri: str) -> str:
    """Why an update of `uri` from the server no longer reaches a subscriber holding `token`, or "" while it does.

    A subscription was checked when it was made; the routes and the rules may have changed since.
    """
    route = routes.resource_route(token, uri)
    if route is None or route.server.name != server_name:
        return f"{uri} no longer reaches {server_name} for this token"
    read = reads.Read(Call.Kind.RESOURCE, route.server, uri, {"uri": uri}, route.served_digest)
    refused = reads.refused_beside_the_read(token, [read], f"The subscription to {uri}")
    return refused.message if refused is not None else ""


def end_refused(token, server_name: str | None, uri: str, why: str, era: str) -> None:
    """The audit event of a subscription the console ended, because an update of it may no longer be passed on."""
    data = {"era": era, "uri": clipped(uri), "outcome": "ended", "error": why}
    routes.record_use("resource.unsubscribed", token, None, data)


def session_relays(session_id: str, server_name: str, uri: str) -> bool:
    """Whether the session's subscription passes on this update; one it may no longer hear is ended."""
    session = sessions.subscriber(session_id, uri)
    if session is None:
        return False
    why = update_refused(session.token, server_name, uri)
    if why:
        with transaction.atomic():
            sessions.remove_subscription(session_id, uri)
            end_refused(session.token, server_name, uri, why, LEGACY)
    return not why


async def session_notifications(session_id: str, message: dict) -> list[dict]:
    """What a legacy session's GET stream sends for one event of the channel layer."""
    if message.get("type") == "catalog.changed":
        return [list_changed(name) for name in LISTS if name in message.get("lists", LISTS)]
    server, uri = message.get("server"), message.get("uri")
    updated = message.get("type") == "resource.updated" and isinstance(server, str) and isinstance(uri, str)
    if updated and await sync_to_async(session_relays)(session_id, server, uri):
        return [jsonrpc.notification("notifications/resources/updated", {"uri": uri})]
    return []


def session_stream(session_id: str):
    """A legacy session's GET stream: the lists' changes, and updates of the resources it subscribed to."""

    async def notifications_for(message: dict) -> list[dict]:
        return await session_notifications(session_id, message)

    async def nothing_first():
        return []

    async def session_still_open():
        return await sync_to_async(sessions.is_open)(session_id)

    return streams.change_events(nothing_first, notifications_for, session_still_open)


async def listen_stream(ctx: ClientContext, msg_id, wanted):
    """A 2026-07-28 subscriptions/listen: its events, the acknowledgement first; refused before it opens
    when the URIs would take the token past MCP_MAX_SUBSCRIPTIONS_PER_TOKEN.

    What it honours is what its acknowledgement names: the lists some enabled server
    offers, and the resources the token reaches on servers that offer subscriptions.
    It subscribes to those once it starts, and lets go when it ends.
    """
    if not isinstance(wanted, dict):
        raise JsonRpcError(INVALID_PARAMS, "subscriptions/listen needs a 'notifications' object")
    uris = wanted.get("resourceSubscriptions") or []
    if not isinstance(uris, list) or not all(isinstance(uri, str) and uri for uri in uris):
        raise JsonRpcError(INVALID_PARAMS, "'resourceSubscriptions' must be a list of resource URIs")
    uris = [routes.requested_uri(uri) for uri in uris]
    if len(set(uris)) > MAX_SUBSCRIPTIONS:
        raise JsonRpcError(INVALID_PARAMS, f"A listen stream may hold at most {MAX_SUBSCRIPTIONS} subscriptions")
    cap = settings.MCP_MAX_SUBSCRIPTIONS_PER_TOKEN
    if cap and uris:
        held = await sync_to_async(sessions.token_subscriptions)(ctx.token.pk)
        if held + LISTENING[ctx.token.pk] + len(set(uris)) > cap:
            raise JsonRpcError(INVALID_PARAMS, sessions.subscriptions_refusal(cap))
    holder = f"listen:{uuid.uuid4().hex}"
    meta = {META_SUBSCRIPTION_ID: msg_id}
    subscribed: dict[str, str] = {}  # URI: the server holding it
    lists: set[str] = set()

    async def acknowledgement():
        offered = {"tools", *await sync_to_async(routes.offered_kinds)()}
        honoured = {flag: True for flag, kind in LIST_FLAGS.items() if wanted.get(flag) is True and kind in offered}
        lists.update(LIST_FLAGS[flag] for flag in honoured)
        for uri in dict.fromkeys(uris):
            try:
                subscribed[uri] = await subscribe_upstream(ctx, uri, holder)
            except JsonRpcError:
                continue  # not honoured: the acknowledgement leaves it out
            LISTENING[ctx.token.pk] += 1
        if subscribed:
            honoured["resourceSubscriptions"] = list(subscribed)
        params = {"notifications": honoured, "_meta": meta}
        return [jsonrpc.notification("notifications/subscriptions/acknowledged", params)]

    async def notifications_for(message: dict) -> list[dict]:
        if message.get("type") == "catalog.changed":
            return [list_changed(name, meta) for name in LISTS if name in lists and name in message.get("lists", LISTS)]
        uri, server = message.get("uri"), message.get("server")
        if message.get("type") != "resource.updated" or not isinstance(uri, str) or subscribed.get(uri) != server:
            return []
        why = await sync_to_async(update_refused)(ctx.token, server, uri)
        if not why:
            return [jsonrpc.notification("notifications/resources/updated", {"uri": uri, "_meta": meta})]
        # The stream goes on for the rest; this resource's updates end here, upstream too.
        del subscribed[uri]
        LISTENING[ctx.token.pk] -= 1
        await session_pool().release(holder, server, uri)
        await sync_to_async(end_refused)(ctx.token, server, uri, why, ctx.era)
        return []

    async def token_still_valid():
        return await sync_to_async(credentials.still_valid)(ctx.token.pk)

    async def release():
        LISTENING[ctx.token.pk] -= len(subscribed)
        if LISTENING[ctx.token.pk] <= 0:
            del LISTENING[ctx.token.pk]
        await session_pool().release(holder)

    return streams.change_events(acknowledgement, notifications_for, token_still_valid, release)
