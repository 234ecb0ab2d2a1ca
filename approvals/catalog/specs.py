"""The ServerSpec the upstream client connects with, from a server's row and the console's settings."""

from django.conf import settings

from approvals.catalog.models import Server
from approvals.upstream import ServerSpec
from approvals.upstream.isolation import Isolation
from approvals.upstream_oauth.bearer import GrantAuthorizer, grant_owner


def stdio_isolation() -> Isolation:
    """What settings ask of a stdio server's isolation, and what of the console it must never see."""
    database = settings.DATABASES["default"]
    private = [str(settings.VAR_DIR)]
    if database["ENGINE"] == "django.db.backends.sqlite3":
        private.append(str(database["NAME"]))
    return Isolation(
        mode=settings.STDIO_ISOLATION,
        user=settings.STDIO_USER,
        private=tuple(private),
        console_dir=str(settings.BASE_DIR),
    )


def upstream_spec(server: Server, user=None) -> ServerSpec:
    """The spec to reach `server` with; on a per-person OAuth server, as `user` (the caller's token's owner)."""
    owner = grant_owner(server, user)
    oauth = server.oauth != Server.OAuth.NONE and server.transport == Server.Transport.HTTP
    return ServerSpec(
        name=server.name,
        transport=server.transport,
        url=server.url,
        command=tuple(server.command_argv()) if server.transport == Server.Transport.STDIO else (),
        headers=dict(server.headers),
        env=dict(server.env),
        cwd=str(settings.BASE_DIR),
        isolation=stdio_isolation() if server.transport == Server.Transport.STDIO else Isolation(),
        revision=server.revision,
        timeout=settings.UPSTREAM_TIMEOUT_SECONDS,
        list_max_pages=settings.UPSTREAM_LIST_MAX_PAGES,
        list_max_bytes=settings.UPSTREAM_LIST_MAX_BYTES,
        result_max_bytes=settings.MAX_RESULT_BYTES,
        identity=str(owner.pk) if owner is not None else "",
        authorizer=GrantAuthorizer(server.pk, owner.pk if owner is not None else None) if oauth else None,
    )
