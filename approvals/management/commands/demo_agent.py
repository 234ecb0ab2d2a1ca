import asyncio
import logging
from urllib.parse import urljoin

import httpx2
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from approvals.catalog.models import Server, Tool
from approvals.demo.agent import SCENARIO, Agent
from approvals.management.commands.seed_demo import DEMO_SERVER, remembered_url, write_private
from approvals.policy import rules
from approvals.policy.models import PolicyRule
from approvals.tokens import credentials, issuing

TOKEN_NAME = "demo-agent"


class Command(BaseCommand):
    help = (
        "Play an agent that sends a stream of calls through the console to the demo server: lookups and "
        "searches allowed by rule, quotes, charts and a slow export held for an operator, deletions denied. "
        "Creates its token and rules the first time. Stop it with Ctrl-C."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--url", help="the console's MCP endpoint (default: /mcp where seed_demo said the console serves)"
        )
        parser.add_argument("--pace", type=float, default=3.0, help="seconds between calls (default 3)")
        parser.add_argument("--count", type=int, default=0, help="stop after this many calls (default: until Ctrl-C)")
        parser.add_argument("--in-flight", type=int, default=6, help="at most this many calls unanswered at once")
        parser.add_argument("--seed", type=int, help="repeat the same arguments from run to run")

    def handle(self, *args, url, pace, count, in_flight, seed, **options):
        url = url or urljoin(remembered_url(), "mcp")
        server = Server.objects.filter(name=DEMO_SERVER).first()
        if server is None:
            raise CommandError(f"no server named {DEMO_SERVER!r}: run `make run` (or manage.py seed_demo) first")
        names = exposed_names(server)
        for line in ensure_rules(server):
            self.stdout.write(line)
        secret = agent_secret(server)
        self.stdout.write(f"Calling {url}; open the console's queue to decide. Ctrl-C stops.")
        agent = Agent(url, secret, names, self.say, seed=seed)
        # The agent's own lines say what happens; a line per HTTP request would drown them.
        logging.getLogger("httpx2").setLevel(logging.WARNING)
        try:
            interrupted = asyncio.run(agent.run(pace, count, max(1, in_flight)))
        except Exception as exc:
            if not unreachable(exc):
                raise
            raise CommandError(f"cannot reach {url}: is the console running (make run)?") from None
        if interrupted:
            self.stdout.write("stopped; the calls still waiting were cancelled")

    def say(self, line: str):
        self.stdout.write(line)
        self.stdout.flush()


def unreachable(exc: BaseException) -> bool:
    """Whether the console could not be reached; the SDK's task groups wrap the error in groups."""
    if isinstance(exc, BaseExceptionGroup):
        return any(unreachable(inner) for inner in exc.exceptions)
    return isinstance(exc, httpx2.ConnectError)


def exposed_names(server: Server) -> dict[str, str]:
    tools = dict(server.tools.filter(status=Tool.Status.ACTIVE).values_list("upstream_name", "exposed_name"))
    missing = sorted({step.tool for step in SCENARIO} - set(tools))
    if missing:
        raise CommandError(f"{server.name} does not list {', '.join(missing)}: sync it (manage.py sync_servers)")
    return tools


def ensure_rules(server: Server) -> list[str]:
    """The agent's rules, added once: reads allowed, deletions denied, everything else asks an operator."""
    prefix = server.tool_prefix
    wanted = [
        rules.RuleRequest("allow", server.name, f"{prefix}lookup_*", name="demo agent: lookups are fine"),
        rules.RuleRequest("allow", server.name, f"{prefix}search_*", name="demo agent: searches are fine"),
        rules.RuleRequest(
            "deny",
            server.name,
            f"{prefix}delete_record",
            name="demo agent: no deletions",
            message="Deleting records is not allowed for this agent; ask a person to do it.",
        ),
        rules.RuleRequest("ask", server.name, "*", name="demo agent: ask for the rest"),
    ]
    added = []
    for request in wanted:
        if not PolicyRule.objects.filter(name=request.name).exists():
            rule = rules.create_rule(request)
            added.append(f"added rule {rule.position}: {rule.action} {rule.tool_glob} ({rule.name})")
    return added


def agent_secret(server: Server) -> str:
    """The agent's token secret, kept beside the database so that every run reuses the same token."""
    path = settings.VAR_DIR / "demo-agent-token"
    if path.exists() and credentials.authenticate(path.read_text().strip()) is not None:
        return path.read_text().strip()
    name = next(
        n for n in (TOKEN_NAME, *(f"{TOKEN_NAME}-{i}" for i in range(2, 1000))) if not issuing.token_problems(n, ["*"])
    )
    _, secret = issuing.issue(name, [f"{server.tool_prefix}*"])
    write_private(path, secret)
    return secret
