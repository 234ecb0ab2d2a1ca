"""Connecting a server that requires OAuth (authorization code with PKCE): discovery, the console's
registration, the authorization request, and the browser's return to the console's callback.

The callback finds its flow by `state` (single use, stored as a digest, expiring), and takes it only from the
browser the flow belongs to, since whoever comes back with a state ties the connection to the upstream account
they signed in to there, and an authorization URL is easily passed on: a flow started by a person (Connect on a
server's page or the account page) only from that person's browser session that started it, a flow
connect_server started (no person, no session) only from a browser signed in to the console as an admin. A
browser refused leaves the flow unspent for the right one.
"""

import hmac
from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

from django.conf import settings
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from approvals import roles
from approvals.audit import chain
from approvals.audit.chain import SYSTEM, Actor
from approvals.protocol import oauth_params
from approvals.upstream import UpstreamError
from approvals.upstream_oauth import connections, server_tokens
from approvals.upstream_oauth.models import OAuth, UpstreamAuthorization, UpstreamClient, UpstreamGrant, server_model
from approvals.upstream_oauth.registering import ensure_registered

FLOW_SECONDS = 600


class ConnectError(Exception):
    """Why a connection could not be started or finished, in words for the admin."""


def console_url(request=None) -> str:
    """The console's public base URL: CONSOLE_URL, else what the request reached."""
    if settings.CONSOLE_URL:
        return settings.CONSOLE_URL.rstrip("/")
    if request is None:
        raise ConnectError("set CONSOLE_URL to the console's public address (https://...) to connect from here")
    return request.build_absolute_uri("/").rstrip("/")


def callback_url(base: str) -> str:
    return base + reverse("upstream_oauth_callback")


def start_connect(server, *, base_url: str, user=None, started_by=None, scope: str = "") -> str:
    """The authorization URL to send a browser to, for the shared connection (user None) or `user`'s own."""
    if server.transport != server.Transport.HTTP:
        raise ConnectError(f"{server.name} is a stdio server: OAuth applies to Streamable HTTP servers only")
    actor = Actor.user(started_by) if started_by is not None else SYSTEM
    redirect_uri = callback_url(base_url)
    try:
        client = server_tokens.discover(server, actor)
        ensure_registered(client, redirect_uri, base_url, actor)
    except UpstreamError as exc:
        raise ConnectError(f"{server.name}: {exc.message}") from None
    if not client.authorization_endpoint:
        raise ConnectError(f"{server.name}'s authorization server names no authorization endpoint")
    grant = UpstreamGrant.objects.filter(server=server, user=user).first()
    chosen = oauth_params.with_offline_access(
        oauth_params.choose_scope(
            grant.wanted_scope if grant else "", client.scopes_supported or None, fixed=scope or client.scope
        ),
        client.metadata.get("scopes_supported"),
    )
    state, verifier = oauth_params.new_state(), oauth_params.new_verifier()
    resource = server_tokens.resource_param(server, client)
    UpstreamAuthorization.objects.create(
        state_digest=oauth_params.state_digest(state),
        server=server,
        user=user,
        started_by=started_by,
        code_verifier=verifier,
        redirect_uri=redirect_uri,
        scope=chosen,
        resource=resource,
        issuer=client.issuer,
        expires_at=timezone.now() + timedelta(seconds=FLOW_SECONDS),
    )
    params = {
        "response_type": "code",
        "client_id": client.client_id,
        "redirect_uri": redirect_uri,
        "scope": chosen,
        "state": state,
        "code_challenge": oauth_params.challenge_for(verifier),
        "code_challenge_method": oauth_params.PKCE_METHOD,
        "resource": resource,
        "prompt": oauth_params.consent_prompt(chosen),
    }
    return oauth_params.authorization_url(client.authorization_endpoint, params)


def binding(url: str) -> str:
    """What the browser session that starts the flow of an authorization URL keeps, for its callback to show."""
    return oauth_params.state_digest(parse_qs(urlsplit(url).query).get("state", [""])[-1])


def flow_of(url: str) -> UpstreamAuthorization:
    """The flow an authorization URL that start_connect made belongs to, found by its state."""
    return UpstreamAuthorization.objects.get(state_digest=binding(url))


def finish_connect(
    state: str, code: str, iss: str | None, error: str = "", *, by=None, bindings=()
) -> UpstreamAuthorization:
    """The browser came back, signed in as `by` (None: not signed in), its session keeping `bindings`: check it,
    exchange the code, keep the tokens. The flow's outcome says how it ended ("connected" or why not); the flow
    is spent either way. ConnectError when no flow is known, or it is not this browser's (then left unspent).

    The flow is spent (one conditional UPDATE) before the code is exchanged, so that a code is used once, and
    the exchange runs outside any transaction, so that a slow token endpoint keeps no other write waiting."""
    digest = oauth_params.state_digest(state or "")
    flow = (
        UpstreamAuthorization.objects.select_related("server", "user", "started_by")
        .filter(state_digest=digest, finished_at__isnull=True, outcome="")
        .first()
    )
    if flow is None or flow.expires_at <= timezone.now():
        raise ConnectError("This authorization is unknown, already used or expired: start Connect again.")
    refused = not_this_browser(flow, by, digest in bindings)
    if refused:
        raise ConnectError(refused)
    if not spend(flow):
        raise ConnectError("This authorization is unknown, already used or expired: start Connect again.")
    server = flow.server
    actor = Actor.user(flow.started_by) if flow.started_by_id else Actor.user(by) if by is not None else SYSTEM
    client = UpstreamClient.objects.get(server=server)
    tokens, why = exchange(flow, client, code, iss, error)
    with transaction.atomic():
        if why is not None:
            chain.record("upstream_oauth.authorization_failed", actor, server=server, data={"reason": why})
        else:
            keep(flow, tokens, actor)
        flow.outcome, flow.finished_at = why or UpstreamAuthorization.CONNECTED, timezone.now()
        flow.save(update_fields=["outcome", "finished_at"])
    return flow


def not_this_browser(flow: UpstreamAuthorization, by, in_session: bool) -> str:
    """Why this browser may not finish the flow, or ""."""
    if flow.started_by_id is not None:
        if by is None or by.pk != flow.started_by_id or not in_session:
            return (
                "This authorization was started in another browser session. Finish it in the browser that pressed "
                "Connect, signed in as the person who pressed it, or press Connect again here."
            )
        return ""
    if by is None or not by.is_active or not roles.is_admin(by):
        return (
            "connect_server started this authorization: sign in to the console as an admin in this browser, then "
            "open the authorization URL it printed again."
        )
    return ""


def spend(flow: UpstreamAuthorization) -> bool:
    """Whether this process took the flow to exchange its code: another that came back with the same state may
    have taken it first."""
    taken = UpstreamAuthorization.objects.filter(pk=flow.pk, outcome="", finished_at__isnull=True)
    return bool(taken.update(outcome=UpstreamAuthorization.EXCHANGING))


def exchange(flow: UpstreamAuthorization, client: UpstreamClient, code: str, iss: str | None, error: str):
    """The tokens the code brings, or why the authorization response cannot be used: (tokens, None) or (None, why)."""
    why = refusal(flow, client, code, iss, error)
    if why is not None:
        return None, why
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": flow.redirect_uri,
        "code_verifier": flow.code_verifier,
        "resource": flow.resource,
    }
    try:
        return server_tokens.token_request(client, form), None
    except UpstreamError as exc:
        return None, f"the token exchange failed: {exc.message}"


def keep(flow: UpstreamAuthorization, tokens, actor) -> None:
    """The connection the flow made: its tokens stored, and the sessions opened with the tokens it replaces
    closed everywhere, so that the next call uses the new one."""
    server = flow.server
    if server.oauth == OAuth.NONE:
        # Connected before any request was refused (added without a sync): from now on its requests carry the token.
        server.oauth = OAuth.AUTHORIZATION_CODE
        server_model().objects.filter(pk=server.pk).update(oauth=server.oauth)
    grant, _ = UpstreamGrant.objects.select_for_update().get_or_create(server=server, user=flow.user)
    grant.connected_at = timezone.now()
    grant.wanted_scope = ""
    server_tokens.store(grant, tokens, flow.scope, grant.connected_at)
    chain.record("upstream_oauth.authorized", actor, server=server, data=server_tokens.token_facts(grant))
    if flow.user_id is None:
        server_tokens.mark_healthy_if_waiting(server)
    connections.forget_sessions(server, flow.user)


def refusal(flow: UpstreamAuthorization, client: UpstreamClient, code: str, iss: str | None, error: str):
    """Why the authorization response cannot be used, or None (RFC 6749 4.1.2, RFC 9207)."""
    if error:
        return f"the authorization server refused: {error}"
    if not code:
        return "the authorization server sent no code"
    issuer_required = (client.metadata or {}).get("authorization_response_iss_parameter_supported") is True
    if iss is None and issuer_required:
        return "the authorization server promised an iss parameter (RFC 9207) and sent none"
    if iss is not None and flow.issuer and not hmac.compare_digest(iss, flow.issuer):
        return f"the response came from issuer {iss!r}, not {flow.issuer!r} (RFC 9207): it may be a mix-up attack"
    return None


def prune_flows() -> int:
    """Forget the flows that ended or expired a day ago: their outcome was read by then."""
    cutoff = timezone.now() - timedelta(days=1)
    return UpstreamAuthorization.objects.filter(expires_at__lt=cutoff).delete()[0]
