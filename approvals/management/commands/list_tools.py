import json

from django.core.management.base import BaseCommand, CommandError

from approvals.catalog.models import Server, Tool


class Command(BaseCommand):
    help = "List the catalog: every tool of every server, or of one."

    def add_arguments(self, parser):
        parser.add_argument("--server", help="only this server's tools")
        parser.add_argument("--json", action="store_true", help="one JSON document with the full definitions")
        parser.add_argument("--all", action="store_true", help="include removed tools")

    def handle(self, *args, server, json: bool, all: bool, **options):
        tools = Tool.objects.select_related("server").order_by("server__name", "exposed_name")
        if server:
            if not Server.objects.filter(name=server).exists():
                raise CommandError(f"no server named {server!r}")
            tools = tools.filter(server__name=server)
        if not all:
            tools = tools.exclude(status=Tool.Status.REMOVED)
        if json:
            self.stdout.write(dumps([describe(tool) for tool in tools]))
            return
        for tool in tools:
            line = f"{tool.server.name}\t{tool.exposed_name}\t{tool.status}\t{tool.title or tool.description[:60]}"
            if tool.reason:
                line += f"\t{tool.reason}"
            self.stdout.write(line)


def describe(tool):
    return {
        "server": tool.server.name,
        "exposed_name": tool.exposed_name,
        "upstream_name": tool.upstream_name,
        "status": tool.status,
        "reason": tool.reason,
        "warnings": tool.warnings,
        "digest": tool.digest,
        "definition": tool.definition,
    }


def dumps(value):
    return json.dumps(value, indent=2, ensure_ascii=False)
