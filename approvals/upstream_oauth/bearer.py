"""The upstream bearer token a request to a server carries: the one function forwarding asks, and what happens
when the server refuses it (refresh, step-up, or back to "needs authorization" with a person to Connect)."""

from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from approvals.db.shared_threads import in_shared_thread
from approvals.protocol.oauth_params import covers, step_up_scope
from approvals.upstream import AuthorizationRequired, UpstreamError
from approvals.upstream_oauth import server_tokens
from approvals.upstream_oauth.models import Connection, OAuth, UpstreamGrant, server_model
from approvals.upstream_oauth.server_tokens import NeedsAuthorization, fresh, renew_at

# Step-ups with no refresh between them after which a server still refusing is an error, not a question of scope.
MAX_STEP_UPS = 3


def grant_owner(server, user):
    """Whose grant a call uses: the caller's own on a per-person server, else the shared one (None)."""
    return user if server.connection == Connection.PER_PERSON else None


def bearer_for(server, user, *, rejected: str | None = None) -> str | None:
    """The access token for `user`'s connection to `server` (the shared one unless the server is per person);
    None when the server does not use OAuth. Refreshes it when it nears its expiry or the server refused
    `rejected`; raises NeedsAuthorization when only a person can mend it."""
    if server.oauth == OAuth.NONE:
        return None
    owner = grant_owner(server, user)
    if server.connection == Connection.PER_PERSON and owner is None:
        raise NeedsAuthorization(server, None)
    grant = UpstreamGrant.objects.filter(server=server, user=owner).first()
    if grant is not None and fresh(grant, rejected):
        return grant.access_token
    if server.oauth == OAuth.CLIENT_CREDENTIALS:
        return server_tokens.client_credentials(server, rejected)
    if grant is None or grant.status != UpstreamGrant.Status.CONNECTED:
        raise NeedsAuthorization(server, owner, grant.wanted_scope if grant else "", grant.reason if grant else "")
    return server_tokens.refresh(grant.pk, rejected)


def stepped_up(server, user, token: str | None, challenge: dict) -> NeedsAuthorization | UpstreamError | None:
    """The server answered 403 insufficient_scope: the grant needs authorization with the wider scope, unless
    it holds that scope already or has stepped up too often, when more authorization would only loop. None
    when the token refused is no longer the grant's: the caller retries with the grant's own."""
    owner = grant_owner(server, user)
    wanted = challenge.get("scope", "")
    with transaction.atomic():
        grant = UpstreamGrant.objects.select_for_update().filter(server=server, user=owner).first()
        if grant is None:
            return NeedsAuthorization(server, owner, wanted)
        if grant.connected and token is not None and grant.access_token != token:
            return None  # connected again since this token was sent: the new one may hold the scope
        if (wanted and covers(grant.scope, wanted)) or grant.step_ups >= MAX_STEP_UPS:
            return UpstreamError(
                f"{server.name} refuses the request even with the scope it asks for ({wanted or 'none named'}); "
                "authorizing again will not help",
            )
        scope = step_up_scope(grant.scope, wanted)
        grant.step_ups += 1
        grant.save(update_fields=["step_ups", "updated_at"])
        server_tokens.needs_authorization(grant, f"{server.name} needs a token with scope {scope!r}", scope)
    return NeedsAuthorization(server, owner, scope)


def _rows(server_pk: int, user_pk: int | None):
    server = server_model().objects.get(pk=server_pk)
    return server, get_user_model().objects.filter(pk=user_pk).first() if user_pk is not None else None


def _bearer(server_pk: int, user_pk: int | None, rejected: str | None = None):
    server, user = _rows(server_pk, user_pk)
    try:
        token = bearer_for(server, user, rejected=rejected)
    except NeedsAuthorization as exc:
        raise AuthorizationRequired(exc.message, challenge={"scope": exc.scope}) from None
    grant = UpstreamGrant.objects.filter(server=server, user=grant_owner(server, user)).first()
    return token, (renew_at(grant) if grant else None)


def _stepped_up(server_pk: int, user_pk: int | None, token: str | None, challenge: dict):
    server, user = _rows(server_pk, user_pk)
    failure = stepped_up(server, user, token, challenge)
    if failure is None:
        return
    if isinstance(failure, NeedsAuthorization):
        raise AuthorizationRequired(failure.message, status=403, challenge={"scope": failure.scope})
    raise failure


@dataclass(eq=False)
class GrantAuthorizer:
    """The transport's Authorizer for one connection: the token is kept in memory until it is due for renewal,
    so a request reads the database only to refresh or after a refusal. That work runs in the loop's shared
    threads: a token endpoint that keeps a refresh waiting holds no request's thread or pooled connection."""

    server_pk: int
    user_pk: int | None = None
    _token: str | None = None
    _renew_at: object = None

    async def bearer(self) -> str | None:
        if self._token and (self._renew_at is None or self._renew_at > timezone.now()):
            return self._token
        self._token, self._renew_at = await in_shared_thread(_bearer)(self.server_pk, self.user_pk)
        return self._token

    async def rejected(self, token: str | None, status: int, challenge: dict) -> str:
        stale = None
        if status == 403:
            await in_shared_thread(_stepped_up)(self.server_pk, self.user_pk, token, challenge)
        else:
            stale = token  # a 401: the token itself is refused, so it is refreshed unless replaced already
        self._token, self._renew_at = await in_shared_thread(_bearer)(self.server_pk, self.user_pk, stale)
        return self._token
