"""Obtaining, keeping and losing a server's OAuth tokens: storing them sealed, refreshing them (rotation
honoured), the client credentials grant, and a connection's fall back to "needs authorization".

Each change writes its audit event in its transaction (the event says what happened, never a token) and
announces after commit. Refreshing holds the grant's row locked across the token request, bounded by
UPSTREAM_TIMEOUT_SECONDS, so two processes never spend one rotating refresh token twice.
"""

from datetime import timedelta

from asgiref.sync import async_to_sync
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from django.conf import settings
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from approvals.audit import chain
from approvals.audit.chain import SYSTEM
from approvals.catalog.models import Server
from approvals.catalog.oauth_models import UpstreamClient, UpstreamGrant
from approvals.live import events
from approvals.protocol.oauth_params import choose_scope
from approvals.upstream import AuthorizationRequired, UpstreamError
from approvals.upstream.oauth_http import Client, Discovered, OAuthHttp, Tokens
from approvals.webhooks import announce

# A token this close to its expiry is refreshed before it is sent.
REFRESH_AHEAD = timedelta(seconds=60)


class NeedsAuthorization(Exception):
    """No token can be had for this server without a person: its message is the caller's tool error."""

    def __init__(self, server: Server, user, scope: str = "", reason: str = ""):
        self.server, self.user, self.scope, self.reason = server, user, scope, reason
        wanted = f" (scope {scope!r})" if scope else ""
        if server.connection == Server.Connection.PER_PERSON:
            where = f"connect your own account to it on your account page ({reverse('account')})"
        else:
            where = f"an admin connects it with Connect on its page ({reverse('server', args=[server.slug])})"
        because = f" {reason.rstrip('.')}." if reason else ""
        self.message = f"The upstream server {server.name} needs authorization{wanted}.{because} To use it, {where}."
        super().__init__(self.message)


def fresh(grant: UpstreamGrant, rejected: str | None = None) -> bool:
    if not grant.connected or (rejected is not None and grant.access_token == rejected):
        return False
    return grant.expires_at is None or grant.expires_at - REFRESH_AHEAD > timezone.now()


def oauth_http() -> OAuthHttp:
    return OAuthHttp(settings.UPSTREAM_TIMEOUT_SECONDS)


async def _discover(url: str, challenge: dict) -> Discovered:
    async with oauth_http() as http:
        return await http.discover(url, challenge)


async def _token(endpoint: str, client: Client, form: dict) -> Tokens:
    async with oauth_http() as http:
        return await http.token(endpoint, client, form)


def token_request(client: UpstreamClient, form: dict) -> Tokens:
    return async_to_sync(_token)(client.token_endpoint, as_client(client), form)


def discover(server: Server, actor=SYSTEM, challenge: dict | None = None) -> UpstreamClient:
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
    client.save()
    data = {"issuer": client.issuer, "resource": client.resource, "legacy": found.legacy}
    data |= {"resource_metadata": client.resource_metadata_url, "token_endpoint": client.token_endpoint}
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


def resource_param(server: Server, client: UpstreamClient) -> str:
    return client.resource if server.resource_indicator else ""


def store(grant: UpstreamGrant, tokens: Tokens, asked_scope: str = "") -> None:
    """Keep what the token endpoint issued; a refresh without a new refresh token keeps the old one."""
    now = timezone.now()
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
    with transaction.atomic():
        grant = UpstreamGrant.objects.select_for_update(of=("self",)).select_related("server").get(pk=grant_pk)
        server = grant.server
        if fresh(grant, rejected):
            return grant.access_token  # another process refreshed it meanwhile
        failure = "The access token was refused or expired and there is no refresh token."
        client = UpstreamClient.objects.filter(server=server).first()
        if grant.refresh_token and client is not None and client.token_endpoint:
            form = {"grant_type": "refresh_token", "refresh_token": grant.refresh_token}
            try:
                tokens = token_request(client, form | {"resource": resource_param(server, client)})
            except AuthorizationRequired as exc:
                failure = f"The authorization server refused to refresh the token: {exc.message}."
                chain.record("upstream_oauth.refresh_refused", SYSTEM, server=server, data={"reason": exc.message})
            else:
                # A connection that lived to be refreshed ended its step-ups: the retry limit counts afresh.
                grant.refreshed_at, grant.step_ups = timezone.now(), 0
                store(grant, tokens)
                chain.record("upstream_oauth.refreshed", SYSTEM, server=server, data=token_facts(grant))
                return grant.access_token
        grant.access_token = grant.refresh_token = None
        needs_authorization(grant, failure, grant.wanted_scope)
    raise NeedsAuthorization(server, grant.user, grant.wanted_scope, failure)


def client_credentials(server: Server) -> str:
    """A token by the client credentials grant (a client secret, or a private-key JWT per RFC 7523)."""
    with transaction.atomic():
        client = UpstreamClient.objects.select_for_update().filter(server=server).first()
        if client is None or not client.client_id:
            raise UpstreamError(f"{server.name} uses client credentials, but no client ID is configured")
        if not client.token_endpoint:
            client = discover(server)
        client.token_auth_method = registration_auth_method(client)
        grant, _ = UpstreamGrant.objects.get_or_create(server=server, user=None)
        scope = choose_scope("", client.scopes_supported or None, fixed=client.scope)
        form = {"grant_type": "client_credentials", "scope": scope, "resource": resource_param(server, client)}
        tokens = token_request(client, form)
        store(grant, tokens, scope)
        data = token_facts(grant) | {"auth_method": client.token_auth_method}
        chain.record("upstream_oauth.client_credentials", SYSTEM, server=server, data=data)
        mark_healthy_if_waiting(server)
        return grant.access_token


def needs_authorization(grant: UpstreamGrant, reason: str, scope: str = "") -> None:
    """The connection cannot go on without a person: recorded, audited, told to admins and webhooks."""
    server = grant.server
    grant.status, grant.reason, grant.wanted_scope = UpstreamGrant.Status.NEEDS_AUTHORIZATION, reason, scope
    grant.save()
    user = grant.user if grant.user_id else None
    data = {"user": user.get_username() if user else None, "scope": scope, "reason": reason}
    chain.record("server.needs_authorization", SYSTEM, server=server, data=data)
    if user is None:
        Server.objects.filter(pk=server.pk).update(health=Server.Health.NEEDS_AUTHORIZATION, last_error=reason)
        server.health, server.last_error = Server.Health.NEEDS_AUTHORIZATION, reason
        events.server_status(server)
    announce.server_needs_authorization(server, user, scope, reason)


def mark_healthy_if_waiting(server: Server) -> None:
    """A shared connection made good again: the server no longer waits for a person (its next sync says more)."""
    if Server.objects.filter(pk=server.pk, health=Server.Health.NEEDS_AUTHORIZATION).update(
        health=Server.Health.UNKNOWN, last_error=""
    ):
        server.health, server.last_error = Server.Health.UNKNOWN, ""
        events.server_status(server)


def challenged(server: Server, challenge: dict, reason: str) -> None:
    """A server refused the console without a token the console could mend: it needs authorization. The first
    401 of a server that had no OAuth makes it an OAuth server; a repeat of a known refusal tells no one again."""
    with transaction.atomic():
        if server.oauth == Server.OAuth.NONE:
            server.oauth = Server.OAuth.AUTHORIZATION_CODE
            Server.objects.filter(pk=server.pk).update(oauth=server.oauth)
        client, _ = UpstreamClient.objects.get_or_create(server=server)
        if challenge.get("resource_metadata") and challenge["resource_metadata"] != client.resource_metadata_url:
            client.resource_metadata_url = challenge["resource_metadata"]
            client.save(update_fields=["resource_metadata_url"])
        grant, _ = UpstreamGrant.objects.select_for_update().get_or_create(server=server, user=None)
        scope = challenge.get("scope") or grant.wanted_scope
        if grant.status == UpstreamGrant.Status.NEEDS_AUTHORIZATION and grant.reason and grant.wanted_scope == scope:
            Server.objects.filter(pk=server.pk).update(health=Server.Health.NEEDS_AUTHORIZATION, last_error=reason)
            return
        needs_authorization(grant, reason, scope)
