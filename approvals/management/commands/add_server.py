import shlex

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from approvals.actions import servers
from approvals.catalog import credentials, sync
from approvals.catalog.models import Server
from approvals.catalog.specs import stdio_isolation
from approvals.upstream import UpstreamError, isolation
from approvals.upstream_oauth import registering


class Command(BaseCommand):
    help = "Add an upstream MCP server and sync its tools."

    def add_arguments(self, parser):
        parser.add_argument("name")
        endpoint = parser.add_mutually_exclusive_group(required=True)
        endpoint.add_argument("--url", help="Streamable HTTP endpoint")
        endpoint.add_argument("--command", help='stdio server: program and arguments, e.g. "npx server --flag"')
        parser.add_argument("--trusted", action="store_true", help="count this server's tool annotations")
        parser.add_argument("--prefix", help="exposed-name prefix (default: the slug and '_'; '' for none)")
        parser.add_argument("--header", action="append", default=[], help='"Name: value", repeatable')
        parser.add_argument("--env", action="append", default=[], help='"KEY=value" for a stdio server, repeatable')
        parser.add_argument("--no-sync", action="store_true", help="add without connecting now")
        parser.add_argument(
            "--accept-tools", action="store_true", help="accept the tools of its first listing without review"
        )
        parser.add_argument(
            "--changes",
            choices=Server.Changes.values,
            default=Server.Changes.REVIEW,
            help="review (the default): new and changed tools wait for an admin; accept: they are accepted unread",
        )

        oauth = parser.add_argument_group("OAuth (servers that require it; see docs/upstream-oauth.md)")
        oauth.add_argument("--client-id", default="", help="a client ID the server's authorization server issued")
        oauth.add_argument("--client-secret", default="", help="that client's secret")
        oauth.add_argument(
            "--client-credentials",
            action="store_true",
            help="use the client credentials grant (machine to machine) instead of a person's consent",
        )
        oauth.add_argument(
            "--private-key-file", help="PEM private key: authenticate by a signed JWT (RFC 7523) instead of a secret"
        )
        oauth.add_argument(
            "--no-resource-indicator",
            action="store_true",
            help="leave out RFC 8707's resource parameter, for authorization servers that refuse it",
        )
        oauth.add_argument(
            "--connection",
            choices=["shared", "per-person"],
            default="shared",
            help="shared (the default): one connection an admin makes; per-person: each caller connects their own",
        )

    def handle(
        self, *args, name, url, command, trusted, prefix, header, env, no_sync, accept_tools, changes, **options
    ):
        oauth = oauth_options(options, url)
        if Server.objects.filter(name=name).exists():
            raise CommandError(f"a server named {name!r} exists already")
        if command:
            refuse_unstartable(command)
        try:
            headers = credentials.parse_header_lines(header)
            env_vars = credentials.parse_env_lines(env)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        with transaction.atomic():
            server = servers.add_server(
                name=name,
                transport=Server.Transport.HTTP if url else Server.Transport.STDIO,
                url=url or "",
                command=command or "",
                headers=headers,
                env=env_vars,
                trusted=trusted,
                tool_prefix=prefix,
                changes=changes,
                accept_tools=accept_tools,
                schedule_sync=False,
                **oauth,
            )
        self.stdout.write(f"added {server.name} (slug {server.slug}, prefix {server.tool_prefix!r})")
        if no_sync:
            return
        report = sync.sync_server(server)
        self.stdout.write(report.summary())
        if not report.ok and server.health == Server.Health.NEEDS_AUTHORIZATION:
            self.stdout.write(f"{server.name} needs authorization: run `manage.py connect_server {server.name!r}`")
            return
        if not report.ok:
            raise CommandError(f"the server was added but could not be synced: {report.error}")


def oauth_options(options: dict, url: str | None) -> dict:
    """add_server's OAuth flags as the action's arguments; a mistake in them as a CommandError."""
    client_id, secret, key_file = options["client_id"], options["client_secret"], options["private_key_file"]
    if (secret or key_file or options["client_credentials"]) and not client_id:
        raise CommandError("--client-secret, --private-key-file and --client-credentials need --client-id")
    if (client_id or options["connection"] != "shared") and not url:
        raise CommandError("OAuth applies to Streamable HTTP servers (--url) only")
    if options["client_credentials"] and not (secret or key_file):
        raise CommandError("--client-credentials needs --client-secret or --private-key-file")
    private_key = ""
    if key_file:
        try:
            with open(key_file) as handle:
                private_key = handle.read()
        except OSError as exc:
            raise CommandError(f"cannot read {key_file}: {exc.strerror}") from None
        if not registering.signing_key_ok(private_key):
            raise CommandError(f"{key_file} holds no PEM private key (unencrypted PKCS#8, RSA or EC)")
    return {
        "oauth": Server.OAuth.CLIENT_CREDENTIALS if options["client_credentials"] else Server.OAuth.NONE,
        "connection": Server.Connection.PER_PERSON if options["connection"] == "per-person" else "shared",
        "resource_indicator": not options["no_resource_indicator"],
        "client_id": client_id,
        "client_secret": secret,
        "private_key": private_key,
    }


def refuse_unstartable(command: str) -> None:
    """CommandError saying why a stdio server running `command` could not start here, isolated as settings ask."""
    wanted = stdio_isolation()
    try:
        isolation.resolve(wanted)
        argv = shlex.split(command)
    except UpstreamError as exc:
        raise CommandError(f"stdio servers cannot start here: {exc.message}") from None
    except ValueError as exc:
        raise CommandError(f"--command: {exc}") from None
    closed = isolation.why_unreachable(argv, wanted.console_dir, wanted)
    if closed:
        raise CommandError(f"this stdio server cannot start here: {closed}")
