"""Obtaining, keeping and losing a server's OAuth tokens: storing them sealed, refreshing them (rotation
honoured), the client credentials grant, and a connection's fall back to "needs authorization".

Each change writes its audit event in its transaction (the event says what happened, never a token) and
announces after commit. No transaction is held across a request to the authorization server: one process at a
time renews a grant's token under a claim (token_claims), so two never spend one rotating refresh token twice.
"""

from datetime import datetime, timedelta

from asgiref.sync import async_to_sync
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from django.conf import settings
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from approvals.audit import chain
from approvals.audit.chain import SYSTEM
from approvals.live import events
from approvals.protocol.oauth_params import choose_scope
from approvals.upstream import AuthorizationRequired, UpstreamError
from approvals.upstream.oauth_http import Client, Discovered, OAuthHttp, Tokens
from approvals.upstream_oauth import connections, token_claims
from approvals.upstream_oauth.models import Connection, OAuth, UpstreamClient, UpstreamGrant, server_model
from approvals.webhooks import announce

# A token this close to its expiry is refreshed before it is sent; one living less than twice this, at half its life.
REFRESH_AHEAD = timedelta(seconds=60)


class NeedsAuthorization(Exception):
    """No token can be had for this server without a person: its message is the caller's tool error."""

    def __init__(self, server, user, scope: str = "", reason: str = ""):
        self.server, self.user, self.scope, self.reason = server, user, scope, reason
        wanted = f" (scope {scope!r})" if scope else ""
        if server.connection == Connection.PER_PERSON and user is None:
            # Only a person can connect an account, and this client token acts as no one (ClientToken.person).
            self.message = (
                f"The upstream server {server.name} acts as each caller's own account, and the client token making "
                "this call acts as no one there: it has no owner, or its owner did not make it. The call must use a "
                "token its owner made (on the Tokens page, or by allowing an OAuth client)."
            )
            super().__init__(self.message)
            return
        if server.connection == Connection.PER_PERSON:
            where = f"connect your own account to it on your account page ({reverse('account')})"
        else:
            where = f"an admin connects it with Connect on its page ({reverse('server', args=[server.slug])})"
        because = f" {reason.rstrip('.')}." if reason else ""
        self.message = f"The upstream server {server.name} needs authorization{wanted}.{because} To use it, {where}."
        super().__init__(self.message)


def renew_at(grant: UpstreamGrant) -> datetime | None:
    """When the grant's access token is renewed before it is sent: REFRESH_AHEAD before its expiry, or half its
    life when that is shorter, counted from its issue (its refresh, else its connection); None: it never expires."""
    if grant.expires_at is None:
        return None
    issued = max((at for at in (grant.refreshed_at, grant.connected_at) if at is not None), default=None)
    ahead = REFRESH_AHEAD if issued is None else min(REFRESH_AHEAD, max(grant.expires_at - issued, timedelta()) / 2)
    return grant.expires_at - ahead


def fresh(grant: UpstreamGrant, rejected: str | None = None) -> bool:
    if not grant.connected or (rejected is not None and grant.access_token == rejected):
        return False
    until = renew_at(grant)
    return until is None or until > timezone.now()


def oauth_http() -> OAuthHttp:
    return OAuthHttp(settings.UPSTREAM_TIMEOUT_SECONDS, allowed_hosts=settings.UPSTREAM_ALLOWED_HOSTS)


async def _discover(url: str, challenge: dict) -> Discovered:
    async with oauth_http() as http:
        return await http.discover(url, challenge)


async def _token(endpoint: str, client: Client, form: dict) -> Tokens:
    async with oauth_http() as http:
        return await http.token(endpoint, client, form)


def token_request(client: UpstreamClient, form: dict) -> Tokens:
    return async_to_sync(_token)(client.token_endpoint, as_client(client), form)


def discover(server, actor=SYSTEM, challenge: dict | None = None) -> UpstreamClient:
    """Find the server's authorization server and keep what was found on its UpstreamClient (audited)."""
    client, _ = UpstreamClient.objects.get_or_create(server=server)
    challenge = challenge or {"resource_metadata": client.resource_metadata_url}
    found = async_to_sync(_discover)(server.url, challenge)
    client.resource = found.resource
    client.resource_metadata_url = found.resource_metadata_url
    client.scopes_supported = found.scopes_supported or []
    client.issuer = found.issuer
    client.metadata = found.metadata
    for name in ("authorization_endpoint", "token_endpoint", "registration_endpoint"):
        setattr(client, name, found.endpoint(name))
    client.discovered_at = timezone.now()
    data = {"issuer": client.issuer, "resource": client.resource, "legacy": found.legacy}
    data |= {"resource_metadata": client.resource_metadata_url, "token_endpoint": client.token_endpoint}
    with transaction.atomic():
        client.save()
        chain.record("upstream_oauth.discovered", actor, server=server, data=data)
    return client


def as_client(client: UpstreamClient) -> Client:
    return Client(
        client_id=client.client_id,
        auth_method=client.token_auth_method or "none",
        client_secret=client.client_secret or "",
        private_key=client.private_key or "",
        signing_algorithm=client.signing_algorithm or signing_algorithm(client.private_key or ""),
        audience=client.issuer,
    )


def signing_algorithm(pem: str) -> str:
    """The JWS algorithm a private key signs with: ES256/384/512 by its curve, RS256, or EdDSA."""
    if not pem:
        return ""
    try:
        key = serialization.load_pem_private_key(pem.encode(), password=None)
    except (ValueError, TypeError):
        return ""
    if isinstance(key, ec.EllipticCurvePrivateKey):
        return {"secp384r1": "ES384", "secp521r1": "ES512"}.get(key.curve.name, "ES256")
    if isinstance(key, ed25519.Ed25519PrivateKey):
        return "EdDSA"
    return "RS256" if isinstance(key, rsa.RSAPrivateKey) else ""


def registration_auth_method(client: UpstreamClient) -> str:
    """How admin-entered credentials authenticate: a private key signs (RFC 7523), else the secret goes as the
    server prefers (Basic, then the form), else none."""
    if client.private_key:
        return "private_key_jwt"
    offered = client.metadata.get("token_endpoint_auth_methods_supported")
    offered = offered if isinstance(offered, list) and offered else ["client_secret_basic"]
    if not client.client_secret:
        return "none"
    return next((m for m in ("client_secret_basic", "client_secret_post") if m in offered), "client_secret_basic")


def resource_param(server, client: UpstreamClient) -> str:
    return client.resource if server.resource_indicator else ""


def store(grant: UpstreamGrant, tokens: Tokens, asked_scope: str = "", issued=None) -> None:
    """Keep what the token endpoint issued (at `issued`, the grant's connection or refresh); a refresh without
    a new refresh token keeps the old one."""
    now = issued or timezone.now()
    grant.access_token = tokens.access_token
    if tokens.refresh_token:
        grant.refresh_token = tokens.refresh_token
    grant.expires_at = now + timedelta(seconds=tokens.expires_in) if tokens.expires_in else None
    grant.scope = tokens.scope if tokens.scope is not None else (asked_scope or grant.scope)
    grant.status, grant.reason = UpstreamGrant.Status.CONNECTED, ""
    grant.save()


def token_facts(grant: UpstreamGrant) -> dict:
    """What the audit log keeps of a grant's tokens: whose, which scope, until when; never a token."""
    return {
        "user": grant.user.get_username() if grant.user_id else None,
        "scope": grant.scope,
        "expires_at": grant.expires_at.isoformat() if grant.expires_at else None,
        "refresh_token": bool(grant.refresh_token),
    }


def refresh(grant_pk: int, rejected: str | None) -> str:
    """A new access token by the refresh token; NeedsAuthorization (after recording it) when refused."""

    def settled(grant: UpstreamGrant) -> str | None:
        if fresh(grant, rejected):
            return grant.access_token  # another process refreshed it meanwhile
        if grant.status != UpstreamGrant.Status.CONNECTED:
            raise NeedsAuthorization(grant.server, grant.user, grant.wanted_scope, grant.reason)
        return None

    return token_claims.renewed(grant_pk, settled, refreshed)


def refreshed(grant: UpstreamGrant, claim: str) -> str:
    server, refused = grant.server, ""
    failure = "The access token was refused or expired and there is no refresh token."
    client = UpstreamClient.objects.filter(server=server).first()
    if grant.refresh_token and client is not None and client.token_endpoint:
        form = {"grant_type": "refresh_token", "refresh_token": grant.refresh_token}
        try:
            tokens = token_request(client, form | {"resource": resource_param(server, client)})
        except AuthorizationRequired as exc:
            refused = exc.message
            failure = f"The authorization server refused to refresh the token: {refused}."
        else:
            with transaction.atomic():
                grant = token_claims.claimed(grant.pk, claim)
                # A connection that lived to be refreshed ended its step-ups: the retry limit counts afresh.
                grant.refreshed_at, grant.step_ups = timezone.now(), 0
                store(grant, tokens, issued=grant.refreshed_at)
                chain.record("upstream_oauth.refreshed", SYSTEM, server=server, data=token_facts(grant))
            return grant.access_token
    with transaction.atomic():
        grant = token_claims.claimed(grant.pk, claim)
        if refused:
            chain.record("upstream_oauth.refresh_refused", SYSTEM, server=server, data={"reason": refused})
        grant.access_token = grant.refresh_token = None
        needs_authorization(grant, failure, grant.wanted_scope)
    raise NeedsAuthorization(server, grant.user, grant.wanted_scope, failure)


def client_credentials(server, rejected: str | None = None, *, anew: bool = False) -> str:
    """A token by the client credentials grant (a client secret, or a private-key JWT per RFC 7523), unless
    another process has just fetched one; `anew` (an admin's Connect) wants one later than the one held."""
    client = UpstreamClient.objects.filter(server=server).first()
    if client is None or not client.client_id:
        raise UpstreamError(f"{server.name} uses client credentials, but no client ID is configured")
    if not client.token_endpoint:
        client = discover(server)
    grant, _ = UpstreamGrant.objects.get_or_create(server=server, user=None)
    rejected = grant.access_token if anew else rejected

    def settled(grant: UpstreamGrant) -> str | None:
        return grant.access_token if fresh(grant, rejected) else None

    def fetched(grant: UpstreamGrant, claim: str) -> str:
        client.token_auth_method = registration_auth_method(client)
        scope = choose_scope("", client.scopes_supported or None, fixed=client.scope)
        form = {"grant_type": "client_credentials", "scope": scope, "resource": resource_param(server, client)}
        tokens = token_request(client, form)
        with transaction.atomic():
            grant = token_claims.claimed(grant.pk, claim)
            grant.connected_at = timezone.now()
            store(grant, tokens, scope, grant.connected_at)
            data = token_facts(grant) | {"auth_method": client.token_auth_method}
            chain.record("upstream_oauth.client_credentials", SYSTEM, server=server, data=data)
            mark_healthy_if_waiting(server)
            if anew:
                connections.forget_sessions(server, None)
        return grant.access_token

    return token_claims.renewed(grant.pk, settled, fetched)


def needs_authorization(grant: UpstreamGrant, reason: str, scope: str = "") -> None:
    """The connection cannot go on without a person: recorded, audited, told to admins and webhooks."""
    server = grant.server
    grant.status, grant.reason, grant.wanted_scope = UpstreamGrant.Status.NEEDS_AUTHORIZATION, reason, scope
    grant.save()
    user = grant.user if grant.user_id else None
    data = {"user": user.get_username() if user else None, "scope": scope, "reason": reason}
    chain.record("server.needs_authorization", SYSTEM, server=server, data=data)
    if user is None:
        server_model().objects.filter(pk=server.pk).update(health=server.Health.NEEDS_AUTHORIZATION, last_error=reason)
        server.health, server.last_error = server.Health.NEEDS_AUTHORIZATION, reason
        events.server_status(server)
    announce.server_needs_authorization(server, user, scope, reason)


def mark_healthy_if_waiting(server) -> None:
    """A shared connection made good again: the server no longer waits for a person (its next sync says more)."""
    if (
        server_model()
        .objects.filter(pk=server.pk, health=server.Health.NEEDS_AUTHORIZATION)
        .update(health=server.Health.UNKNOWN, last_error="")
    ):
        server.health, server.last_error = server.Health.UNKNOWN, ""
        events.server_status(server)


def challenged(server, challenge: dict, reason: str) -> None:
    """A server refused the console without a token the console could mend: it needs authorization. The first
    401 of a server that had no OAuth makes it an OAuth server; a repeat of a known refusal tells no one again."""
    with transaction.atomic():
        if server.oauth == OAuth.NONE:
            server.oauth = OAuth.AUTHORIZATION_CODE
            server_model().objects.filter(pk=server.pk).update(oauth=server.oauth)
        client, _ = UpstreamClient.objects.get_or_create(server=server)
        if challenge.get("resource_metadata") and challenge["resource_metadata"] != client.resource_metadata_url:
            client.resource_metadata_url = challenge["resource_metadata"]
            client.save(update_fields=["resource_metadata_url"])
        grant, _ = UpstreamGrant.objects.select_for_update().get_or_create(server=server, user=None)
        scope = challenge.get("scope") or grant.wanted_scope
        if grant.status == UpstreamGrant.Status.NEEDS_AUTHORIZATION and grant.reason and grant.wanted_scope == scope:
            server_model().objects.filter(pk=server.pk).update(
                health=server.Health.NEEDS_AUTHORIZATION, last_error=reason
            )
            return
        needs_authorization(grant, reason, scope)
