from django.core.management.base import BaseCommand, CommandError

from approvals.audit.chain import Actor
from approvals.catalog import review
from approvals.catalog.models import Server, Tool
from approvals.management.acting import acting_user
from approvals.protocol.tool_review import plain_diff


class Command(BaseCommand):
    help = (
        "List the tools that need review, with what changed, or accept or reject one. The deciding admin is --as, "
        "else the username in $CONSOLE_OPERATOR, else the only active superuser. Listing exits 1 when something "
        "needs review, so that a script can wait for an admin."
    )

    def add_arguments(self, parser):
        parser.add_argument("--server", metavar="NAME", help="only this server's tools")
        decision = parser.add_mutually_exclusive_group()
        decision.add_argument("--accept", metavar="EXPOSED_NAME", help="accept the tool's listed definition")
        decision.add_argument("--reject", metavar="EXPOSED_NAME", help="keep the tool out of every client's list")
        decision.add_argument(
            "--accept-all", action="store_true", help="accept every tool of --server that needs review"
        )
        parser.add_argument("--note", default="", help="kept in the audit log")
        parser.add_argument("--as", dest="username", metavar="USERNAME", help="the deciding admin")

    def handle(self, *args, server, accept, reject, accept_all, note, username, **options):
        chosen = self.server_named(server)
        if accept_all and chosen is None:
            raise CommandError("--accept-all needs --server NAME")
        if not (accept or reject or accept_all):
            return self.list_pending(chosen)
        actor = Actor.user(acting_user(username, review.may_review, "review tools (needs the admin role)"))
        if accept_all:
            outcomes = [review.accept(tool.pk, actor, note) for tool in review.needs_review(chosen)]
        else:
            name = accept or reject
            tool = Tool.objects.filter(exposed_name=name, status__in=review.DECIDABLE).first()
            if tool is None or (chosen is not None and tool.server_id != chosen.pk):
                raise CommandError(f"no tool named {name!r} awaits review")
            outcomes = [(review.accept if accept else review.reject)(tool.pk, actor, note)]
        for outcome in outcomes:
            self.stdout.write(outcome.message)
        failed = [outcome for outcome in outcomes if not outcome.done]
        if failed:
            raise CommandError(f"{len(failed)} of {len(outcomes)} decisions were not made")

    def server_named(self, name):
        if name is None:
            return None
        server = Server.objects.filter(name=name).first()
        if server is None:
            raise CommandError(f"no server named {name!r}")
        return server

    def list_pending(self, server):
        pending = list(review.needs_review(server))
        for tool in pending:
            shown = review.review_of(tool)
            what = "new tool" if shown.is_new else "changed"
            self.stdout.write(f"{tool.exposed_name} ({tool.server.name}): {what}, digest {tool.digest[:12]}")
            for item in shown.hidden:
                self.stdout.write(f"  ! hidden content: {item}")
            for line in plain_diff(shown.changes):
                self.stdout.write(f"  {line}")
            self.stdout.write("")
        if pending:
            raise CommandError("1 tool needs review" if len(pending) == 1 else f"{len(pending)} tools need review")
        self.stdout.write("Nothing needs review.")
