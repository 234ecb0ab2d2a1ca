from django.core.management.base import BaseCommand, CommandError

from approvals.audit.chain import Actor
from approvals.catalog import review, trust
from approvals.catalog.models import Server, Tool
from approvals.catalog.surface_sync import KINDS
from approvals.management.acting import acting_user
from approvals.protocol.tool_review import plain_diff

# What each kind is called on the command line, and the model that holds it.
MODELS = {"tool": Tool, **{trust.NOUNS[kind.model]: kind.model for kind in KINDS}}


class Command(BaseCommand):
    help = (
        "List the tools, resources, resource templates and prompts that need review, with what changed, or accept "
        "or reject one. The deciding admin is --as, else the username in $CONSOLE_OPERATOR, else the only active "
        "superuser. Listing exits 1 when anything needs review, so that a script can wait for an admin."
    )

    def add_arguments(self, parser):
        parser.add_argument("--server", metavar="NAME", help="only this server's entries")
        parser.add_argument(
            "--kind", choices=sorted(MODELS), help="what --accept or --reject names, when more than one kind has it"
        )
        decision = parser.add_mutually_exclusive_group()
        decision.add_argument(
            "--accept",
            metavar="NAME",
            help="accept the listed definition of a tool or prompt (by exposed name), "
            "a resource (by URI) or a template (by URI template)",
        )
        decision.add_argument("--reject", metavar="NAME", help="keep it out of every client's list")
        decision.add_argument(
            "--accept-all", action="store_true", help="accept everything of --server that needs review"
        )
        parser.add_argument("--note", default="", help="kept in the audit log")
        parser.add_argument("--as", dest="username", metavar="USERNAME", help="the deciding admin")

    def handle(self, *args, server, kind, accept, reject, accept_all, note, username, **options):
        chosen = self.server_named(server)
        if accept_all and chosen is None:
            raise CommandError("--accept-all needs --server NAME")
        if not (accept or reject or accept_all):
            return self.list_pending(chosen)
        actor = Actor.user(acting_user(username, review.may_review, "review tools (needs the admin role)"))
        if accept_all:
            items = pending(chosen)
            outcomes = [review.accept(item.pk, actor, note, model=type(item)) for item in items]
        else:
            item = self.item_named(accept or reject, kind, chosen)
            decide = review.accept if accept else review.reject
            outcomes = [decide(item.pk, actor, note, model=type(item))]
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

    def item_named(self, name, kind, server):
        """The entry awaiting a decision that `name` names: a tool's or prompt's exposed name, a resource's URI."""
        found = []
        for noun, model in MODELS.items():
            if kind not in (None, noun):
                continue
            rows = model.objects.select_related("server").filter(status__in=review.DECIDABLE)
            rows = rows.filter(server=server) if server is not None else rows
            field = "uri" if hasattr(model, "uri") else "exposed_name"
            found += [(noun, row) for row in rows.filter(**{field: name})]
        if not found:
            raise CommandError(f"nothing named {name!r} awaits review")
        if len(found) > 1:
            nouns = " and a ".join(noun for noun, _row in found)
            raise CommandError(f"{name!r} names a {nouns}: say which with --kind")
        return found[0][1]

    def list_pending(self, server):
        items = pending(server)
        for item in items:
            shown = review.review_of(item)
            what = f"new {trust.noun_of(item)}" if shown.is_new else f"changed {trust.noun_of(item)}"
            self.stdout.write(f"{trust.label_of(item)} ({item.server.name}): {what}, digest {item.digest[:12]}")
            for hidden in shown.hidden:
                self.stdout.write(f"  ! hidden content: {hidden}")
            for line in plain_diff(shown.changes):
                self.stdout.write(f"  {line}")
            self.stdout.write("")
        if items:
            raise CommandError(counted(items))
        self.stdout.write("Nothing needs review.")


def pending(server) -> list:
    """What awaits review, tools first, then resources, templates and prompts."""
    return [*review.needs_review(server), *review.surface_needing_review(server)]


def counted(items) -> str:
    """'1 tool needs review', '2 tools and 1 prompt need review'."""
    counts = {}
    for item in items:
        counts[trust.noun_of(item)] = counts.get(trust.noun_of(item), 0) + 1
    parts = [f"{n} {noun}{'s' if n > 1 else ''}" for noun, n in counts.items()]
    listed = ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0]
    return f"{listed} {'needs' if len(items) == 1 else 'need'} review"
