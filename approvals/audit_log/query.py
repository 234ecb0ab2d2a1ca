"""Finding audit events: what the auditor's filter selects, and keyset pages over it.

Pages are keyset pages on seq (`seq < last one shown`), never OFFSET: each filter
has an index that ends in seq, so a page costs the same on the first screen as on
the ten-thousandth, and it stays right while events are appended.
"""

import json
from dataclasses import dataclass

from django.db import OperationalError, connection, transaction
from django.db.models import Q, TextField
from django.db.models.functions import Cast, Upper

from approvals.audit.models import AuditEvent, AuditHead
from approvals.calls.models import Call
from approvals.catalog.models import Server, Tool
from approvals.tokens.models import ClientToken

PAGE_SIZE = 50
COUNT_LIMIT = 10_000
COUNT_BUDGET_MS = 30
SUMMARY_CHARS = 160


def search_expression():
    # A PostgreSQL migration indexes exactly this expression with pg_trgm, so that
    # a substring search does not read every event.
    return Upper(Cast("data", TextField()))


def filter_events(cleaned: dict):
    """The events a valid AuditFilter's cleaned_data selects, in no particular order."""
    events = AuditEvent.objects.all()
    if cleaned.get("since"):
        events = events.filter(at__gte=cleaned["since"])
    if cleaned.get("until"):
        events = events.filter(at__lt=cleaned["until"])
    if cleaned.get("client"):
        events = events.filter(token_id=cleaned["client"].pk)
    if cleaned.get("server"):
        events = events.filter(server_id=cleaned["server"].pk)
    if cleaned.get("tool"):
        events = events.filter(tool_id=cleaned["tool"].pk)
    if cleaned.get("operator"):
        events = events.filter(actor_type="user", actor_id=cleaned["operator"].pk)
    if cleaned.get("action"):
        events = events.filter(action=cleaned["action"])
    if cleaned.get("outcome"):
        # The call table repeats the client, server and tool: narrowing the calls there
        # lets the database find few calls first, then their events by call_id.
        ended = Call.objects.filter(status=cleaned["outcome"])
        for name in ("client", "server", "tool"):
            if cleaned.get(name):
                ended = ended.filter(**{"token" if name == "client" else name: cleaned[name]})
        events = events.filter(call_id__in=ended.values("pk"))
    if cleaned.get("q"):
        events = events.alias(data_text=search_expression()).filter(text_matching(cleaned["q"]))
    return events


def text_matching(text: str) -> Q:
    """Events whose data holds `text`, whatever its case: a reason, an input answer, a result, arguments.

    The data is searched as JSON text, so `text` is sought as JSON writes it inside a string: escaped,
    with non-ASCII as itself (PostgreSQL's form) or as \\u escapes (SQLite's). An event holds arguments
    whole only up to AUDIT_PREVIEW_BYTES, and a preview beyond: for those the call's own row, which holds
    them whole as made and as edited, is searched.
    """
    forms_of_text = {json.dumps(text, ensure_ascii=only_ascii)[1:-1].upper() for only_ascii in (False, True)}
    found = Q()
    for needle in forms_of_text:
        found |= Q(data_text__contains=needle)
    needle = text.upper()
    large = Call.objects.alias(
        made=Upper(Cast("arguments", TextField())), edited=Upper(Cast("edited_arguments", TextField()))
    ).filter(Q(made__contains=needle) | Q(edited__contains=needle))
    previewed = Q(data__has_key="arguments_preview", call_id__in=large.values("pk"))
    return found | previewed


@dataclass
class Page:
    events: list
    older: int | None  # the `before` cursor of the next page back in time, when there is one
    newer: int | None  # the `after` cursor of the page before this one, when there is one


def keyset_page(events, before=None, after=None, size=PAGE_SIZE) -> Page:
    """Newest first: `before=seq` pages back in time, `after=seq` pages forward."""
    if after is not None:
        rows = list(events.filter(seq__gt=after).order_by("seq")[: size + 1])
        more_newer = len(rows) > size
        rows = rows[:size][::-1]
        older = rows[-1].seq if rows else None
        return Page(rows, older, rows[0].seq if rows and more_newer else None)
    if before is not None:
        events = events.filter(seq__lt=before)
    rows = list(events.order_by("-seq")[: size + 1])
    more_older = len(rows) > size
    rows = rows[:size]
    newer = rows[0].seq if rows and before is not None else None
    return Page(rows, rows[-1].seq if rows and more_older else None, newer)


@dataclass
class Matching:
    count: int | None  # None: counting would have taken too long
    more: bool  # there are more than `count`: counting stopped there


def bounded_count(events, cleaned) -> Matching:
    """How many events match, counted up to COUNT_LIMIT and, on PostgreSQL, for at most COUNT_BUDGET_MS."""
    if cleaned is None:
        return Matching(0, False)
    head = AuditHead.objects.filter(pk=1).first()
    if head is not None and not any(cleaned.values()):
        # The chain has no gaps: the whole log is the head less the anchor.
        return Matching(head.seq - head.anchor_seq, False)
    counted = within_budget(lambda: events[: COUNT_LIMIT + 1].count())
    if counted is None:
        return Matching(None, True)
    return Matching(min(counted, COUNT_LIMIT), counted > COUNT_LIMIT)


def within_budget(query):
    """The query's result, or None when PostgreSQL needs longer than COUNT_BUDGET_MS for it.

    A count reads every match, and a common word in the arguments may match much of the
    log: the page must not wait for that.
    """
    if connection.vendor != "postgresql":
        return query()
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('statement_timeout')")
        (previous,) = cursor.fetchone()
    try:
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SELECT set_config('statement_timeout', %s, true)", [str(COUNT_BUDGET_MS)])
            result = query()
            # Set back by hand: inside an outer transaction, SET LOCAL would outlive this block.
            with connection.cursor() as cursor:
                cursor.execute("SELECT set_config('statement_timeout', %s, true)", [previous])
            return result
    except OperationalError:
        return None


def labelled(events):
    """The events with names for their subjects and a one-line summary of their data."""
    events = list(events)
    tools = Tool.objects.in_bulk({e.tool_id for e in events if e.tool_id})
    servers = Server.objects.in_bulk({e.server_id for e in events if e.server_id})
    tokens = ClientToken.objects.in_bulk({e.token_id for e in events if e.token_id})
    for event in events:
        event.tool_label = label(tools, event.tool_id, event.data.get("tool") if isinstance(event.data, dict) else None)
        event.server_label = label(servers, event.server_id)
        event.client_label = label(tokens, event.token_id)
        summary = json.dumps(event.data, ensure_ascii=False, separators=(", ", ": "))
        event.summary = summary if len(summary) <= SUMMARY_CHARS else summary[: SUMMARY_CHARS - 1] + "…"
    return events


def label(found, pk, fallback=None):
    if pk is None:
        return fallback or ""
    # A deleted subject keeps its id in the log.
    return str(found[pk]) if pk in found else (fallback or f"#{pk}")


def call_timeline(call_id):
    return AuditEvent.objects.filter(call_id=call_id).order_by("seq")


def decided_calls(user, before=None, size=PAGE_SIZE):
    """The calls this user approved, edited or denied, latest first, one keyset page on the call id."""
    calls = Call.objects.filter(decided_by=user).select_related("token", "server")
    if before is not None:
        calls = calls.filter(pk__lt=before)
    rows = list(calls.order_by("-pk")[: size + 1])
    return rows[:size], (rows[size - 1].pk if len(rows) > size else None)


def may_see_call(user, call_id) -> bool:
    """Auditors see every call; an operator sees the calls they decided."""
    if user.has_perm("approvals.view_auditevent"):
        return True
    return Call.objects.filter(pk=call_id, decided_by=user).exists()
