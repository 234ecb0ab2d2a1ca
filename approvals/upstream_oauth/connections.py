"""A person's own connections to the servers that take one per person: which there are, and ending one.

On such a server every call goes upstream with its caller's own token, so the upstream attributes the action
to that person; the caller is the client token's owner, who connects on their account page.
"""

from dataclasses import dataclass

from django.db import models, transaction

from approvals.audit import chain
from approvals.live import events
from approvals.upstream_oauth.models import Connection, OAuth, UpstreamGrant, server_model


@dataclass(frozen=True)
class PersonConnection:
    server: models.Model  # a Server of the catalog
    grant: UpstreamGrant | None

    @property
    def connected(self) -> bool:
        return self.grant is not None and self.grant.connected

    @property
    def state(self) -> str:
        if self.connected:
            return "connected"
        return "needs authorization" if self.grant is not None else "not connected"


def per_person_servers():
    """The enabled servers on which each caller acts through a connection of their own."""
    return (
        server_model()
        .objects.filter(enabled=True, oauth=OAuth.AUTHORIZATION_CODE, connection=Connection.PER_PERSON)
        .order_by("name")
    )


def connections_of(user) -> list[PersonConnection]:
    servers = list(per_person_servers())
    grants = {grant.server_id: grant for grant in UpstreamGrant.objects.filter(user=user, server__in=servers)}
    return [PersonConnection(server, grants.get(server.pk)) for server in servers]


def lister(server):
    """Whose connection a per-person server's lists are read through: the person whose connection changed last
    (None: the shared connection, or nobody connected yet). A server may list differently for different people;
    the catalog keeps one list, reviewed like any other."""
    if not (server.oauth and server.connection == Connection.PER_PERSON):
        return None
    grant = (
        UpstreamGrant.objects.filter(server=server, user__isnull=False, status=UpstreamGrant.Status.CONNECTED)
        .select_related("user")
        .order_by("-updated_at")
        .first()
    )
    return grant.user if grant is not None else None


def disconnect(server, user) -> bool:
    """Forgets the person's tokens for the server, audited; False when there were none."""
    with transaction.atomic():
        deleted, _ = UpstreamGrant.objects.filter(server=server, user=user).delete()
        if deleted:
            actor = chain.Actor.user(user)
            chain.record("upstream_oauth.disconnected", actor, server=server, data={"connection": "own"})
            forget_sessions(server, user)
    return bool(deleted)


def forget_sessions(server, user):
    """Every process closes its sessions made with the person's connection (user None: the shared one): their
    transport keeps the token it last had, and would go on using tokens taken back, or another account's, or
    ones a server no longer accepts, until they expire."""
    events.upstream_retired(server.name, identity=str(user.pk) if user is not None else "")
