from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from approvals.actions import servers
from approvals.catalog import credentials, sync
from approvals.catalog.models import Server


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

    def handle(
        self, *args, name, url, command, trusted, prefix, header, env, no_sync, accept_tools, changes, **options
    ):
        if Server.objects.filter(name=name).exists():
            raise CommandError(f"a server named {name!r} exists already")
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
            )
        self.stdout.write(f"added {server.name} (slug {server.slug}, prefix {server.tool_prefix!r})")
        if no_sync:
            return
        report = sync.sync_server(server)
        self.stdout.write(report.summary())
        if not report.ok:
            raise CommandError(f"the server was added but could not be synced: {report.error}")
