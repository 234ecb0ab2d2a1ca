"""The queue page: pending calls grouped by client and tool, paged, filtered, sorted.

Groups stand in the order of their oldest call, and calls within a group oldest
first; sorted by time left, groups by their first deadline and calls by theirs. A page holds QUEUE_PAGE_SIZE
calls; a group may run over from one page to the next. One aggregate reads every
group's count, then one query per group on the page reads its calls: a queue of
thousands costs a page of rows, not thousands.
"""

import json
from dataclasses import dataclass, field
from datetime import datetime
from urllib.parse import urlencode

from django.conf import settings
from django.db.models import Count, Min, Q

from approvals.calls.models import Call
from approvals.catalog.models import Server
from approvals.display import rows
from approvals.forms.fields import whole_number
from approvals.protocol.tools import annotations
from approvals.tokens.models import ClientToken

# How much of a call's arguments its row shows on one line; the detail pane shows them whole.
LINE_CHARS = 160


def read_only(call: Call) -> bool:
    """A tool call that a trusted server marks read-only: the one kind the queue decides on a single key."""
    if call.kind != Call.Kind.TOOL or call.tool is None or call.server is None or not call.server.trusted:
        return False
    return annotations(call.tool.definition).get("readOnlyHint") is True


def arguments_line(call: Call) -> str:
    """The arguments as one short line, `key: value`, for a compact row."""
    shown = call.final_arguments
    if not isinstance(shown, dict):
        return ""
    parts = []
    for key, value in shown.items():
        parts.append(f"{key}: {value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)}")
        if sum(map(len, parts)) > LINE_CHARS:
            break
    line = ", ".join(parts)
    return line if len(line) <= LINE_CHARS else line[: LINE_CHARS - 1] + "…"


def upstream_identity(call: Call) -> str:
    """Whose identity the call reaches its upstream with, once approved."""
    if call.kind == Call.Kind.PERMISSION:
        return "none: the coding agent runs its own tool with its own rights"
    server = call.server
    if server is None:
        return "none: no upstream server"
    if server.oauth and server.connection == Server.Connection.PER_PERSON:
        person = call.token.person if call.token else None
        if person is None:
            return (
                f"none: {server.name} takes each person's own connection, and this client token acts as no one there "
                "(it has no owner, or its owner did not make it)"
            )
        return f"{person.get_username()}'s own connection to {server.name}: the person who owns the client token"
    return f"the console's shared connection to {server.name}: one identity for every client and operator"


# The orders the queue offers: by arrival (the default, "") or by time left.
BY_TIME_LEFT = "expiry"
SORTS = {"", BY_TIME_LEFT}


@dataclass(frozen=True)
class QueueFilter:
    """What the operator narrowed the queue to: a client (token), an exposed tool name, a server; and its order."""

    client: int | None = None
    tool: str = ""
    server: int | None = None
    sort: str = ""

    @classmethod
    def from_query(cls, query) -> "QueueFilter":
        tool = str(query.get("tool") or "").strip()[:200]
        sort = str(query.get("sort") or "")
        sort = sort if sort in SORTS else ""
        return cls(whole_number(query.get("client")), tool, whole_number(query.get("server")), sort)

    @property
    def by_time_left(self) -> bool:
        return self.sort == BY_TIME_LEFT

    def q(self) -> Q:
        chosen = {"token_id": self.client, "tool_name": self.tool, "server_id": self.server}
        return Q(**{name: value for name, value in chosen.items() if value not in (None, "")})

    def apply(self, calls):
        return calls.filter(self.q())

    def matches(self, call: Call) -> bool:
        return (
            (self.client is None or call.token_id == self.client)
            and (not self.tool or call.tool_name == self.tool)
            and (self.server is None or call.server_id == self.server)
        )

    def narrowing(self) -> dict:
        chosen = {"client": self.client, "tool": self.tool, "server": self.server}
        return {name: value for name, value in chosen.items() if value not in (None, "")}

    def params(self) -> dict:
        return self.narrowing() | ({"sort": self.sort} if self.sort else {})

    def query_string(self, **more) -> str:
        return urlencode({**self.params(), **more})

    def __bool__(self):
        return bool(self.narrowing())


def group_key(token_id, tool_name) -> str:
    return f"{token_id}:{tool_name}"


@dataclass
class Group:
    """One client's pending calls to one tool, and the ones of them this page shows."""

    token_id: int
    token_name: str
    tool_name: str
    count: int
    oldest: datetime | None = None
    calls: list = field(default_factory=list)
    first: int = 0  # how many of the group's calls come before the first one shown

    @property
    def key(self) -> str:
        return group_key(self.token_id, self.tool_name)

    @property
    def ends_here(self) -> bool:
        """The group's newest call is on this page: a call arriving for it belongs here too."""
        return self.first + len(self.calls) >= self.count

    @property
    def shown_from(self) -> int:
        return self.first + 1

    @property
    def shown_to(self) -> int:
        return self.first + len(self.calls)

    @property
    def whole(self) -> bool:
        return self.first == 0 and self.ends_here

    def only_these(self) -> str:
        return QueueFilter(self.token_id, self.tool_name).query_string()


@dataclass
class QueuePage:
    groups: list
    number: int
    pages: int
    total: int
    filter: QueueFilter

    @property
    def last(self) -> bool:
        return self.number >= self.pages

    @property
    def previous_link(self) -> str:
        return "?" + self.filter.query_string(page=self.number - 1) if self.number > 1 else ""

    @property
    def next_link(self) -> str:
        return "" if self.last else "?" + self.filter.query_string(page=self.number + 1)


def pending_in(filter_: QueueFilter):
    return filter_.apply(Call.objects.filter(status=Call.Status.PENDING))


def queue_page(filter_: QueueFilter, number=1, size: int | None = None) -> QueuePage:
    size = size or settings.QUEUE_PAGE_SIZE
    leading = "soonest" if filter_.by_time_left else "oldest"
    summary = list(
        pending_in(filter_)
        .values("token_id", "tool_name")
        .annotate(count=Count("pk"), oldest=Min("received_at"), soonest=Min("expires_at"))
        .order_by(leading, "token_id", "tool_name")
    )
    total = sum(group["count"] for group in summary)
    pages = max(1, -(-total // size))
    number = min(max(1, whole_number(number) or 1), pages)
    start, end = (number - 1) * size, number * size
    groups, position = [], 0
    for group in summary:
        begins, position = position, position + group["count"]
        if position <= start:
            continue
        if begins >= end:
            break
        first = max(0, start - begins)
        shown = min(position, end) - begins - first
        calls = rows.pending_calls().filter(token_id=group["token_id"], tool_name=group["tool_name"])
        calls = calls.prefetch_related("approvals")
        if filter_.by_time_left:
            calls = calls.order_by("expires_at", "pk")
        calls = list(filter_.apply(calls)[first : first + shown])
        groups.append(Group(group["token_id"], "", group["tool_name"], group["count"], group["oldest"], calls, first))
    names = dict(ClientToken.objects.filter(pk__in={g.token_id for g in groups}).values_list("pk", "name"))
    for group in groups:
        group.token_name = names.get(group.token_id, "")
    return QueuePage(groups, number, pages, total, filter_)


def pending_counts(filter_: QueueFilter, calls: list[Call]) -> tuple[int | None, dict[str, int]]:
    """How many calls are pending in all, and in each group of the queue `filter_` shows that one of `calls` is in,
    by group key: one query for any number of calls; (None, {}) for none."""
    pairs = list({(call.token_id, call.tool_name) for call in calls})
    if not pairs:
        return None, {}
    groups = {
        f"group{n}": Count("pk", filter=filter_.q() & Q(token_id=token_id, tool_name=tool_name))
        for n, (token_id, tool_name) in enumerate(pairs)
    }
    counts = Call.objects.filter(status=Call.Status.PENDING).aggregate(total=Count("pk"), **groups)
    return counts["total"], {group_key(*pair): counts[f"group{n}"] for n, pair in enumerate(pairs)}


def arriving_group(call: Call, count: int) -> Group:
    """The group of `count` calls a newly pending call joins, holding that call alone: what a page adds when it
    shows no such group."""
    return Group(call.token_id, call.token.name, call.tool_name, count, call.received_at, [call], max(0, count - 1))


def filter_choices() -> dict:
    """What the filter offers: the clients, tools and servers that have calls waiting."""
    pending = Call.objects.filter(status=Call.Status.PENDING)
    clients = ClientToken.objects.filter(pk__in=pending.values("token_id")).order_by("name").values_list("pk", "name")
    servers = Server.objects.filter(pk__in=pending.values("server_id")).order_by("name").values_list("pk", "name")
    tools = pending.order_by("tool_name").values_list("tool_name", flat=True).distinct()
    return {"clients": list(clients), "tools": list(tools), "servers": list(servers)}
