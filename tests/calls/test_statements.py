"""A call's insert and conditional update written out once (approvals.db.statements): rows as the ORM writes them."""

from datetime import timedelta

import pytest
from django.db import connection
from django.db.models import F
from django.db.models.signals import post_save
from django.utils import timezone

from approvals.calls.models import Call
from approvals.db import statements
from approvals.policy.models import PolicyRule
from approvals.tokens.models import ClientToken
from tests.fixtures.calls import pending_call
from tests.fixtures.catalog import make_server, make_tool
from tests.fixtures.people import make_user


def stored(call_id) -> dict:
    return Call.objects.filter(pk=call_id).values().get()


def raw(call_id) -> dict:
    """The row as the database driver gives it back, before any field's conversion."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM {connection.ops.quote_name(Call._meta.db_table)} WHERE id = %s", [call_id])
        return dict(zip([column[0] for column in cursor.description], cursor.fetchone(), strict=True))


def test_it_inserts_a_call_as_the_orm_would(client_token):
    tool = make_tool(make_server(), "lookup")
    rule = PolicyRule.objects.create(name="lookups", action="ask", tool_glob="records_*")
    now = timezone.now()
    fields = {
        "token": client_token,
        "tool": tool,
        "server": tool.server,
        "rule": rule,
        "tool_name": tool.exposed_name,
        "arguments": {"order": [1, 2.5, None], "note": "née"},
        "jsonrpc_id": "a-1",
        "received_at": now,
        "expires_at": now + timedelta(minutes=5),
        "status": Call.Status.PENDING,
        # A column of each other kind: a small and a large integer, flags, JSON null as SQL NULL, a person's key.
        "approvals_needed": 2,
        "task_ttl_ms": 2**31 - 1,
        "separation_of_duties": True,
        "is_error": False,
        "progress_token": None,
        "decided_by": make_user("olga"),
    }
    written, saved = Call(request_id="one", **fields), Call(request_id="two", **fields)

    statements.insert(written)
    saved.save(force_insert=True)

    assert written.pk is not None and written.pk != saved.pk and not written._state.adding
    for read in (stored, raw):
        mine, orms = read(written.pk), read(saved.pk)
        for key in ("id", "request_id"):
            mine.pop(key), orms.pop(key)
        assert mine == orms
    assert Call.objects.get(pk=written.pk).arguments == {"order": [1, 2.5, None], "note": "née"}


def test_it_leaves_a_model_with_save_signals_to_the_orm(client_token):
    tool = make_tool(make_server(), "lookup")
    seen = []

    def noted(sender, instance, created, **kwargs):
        seen.append((instance.request_id, created))

    post_save.connect(noted, sender=Call)
    try:
        statements.insert(Call(token=client_token, tool=tool, tool_name=tool.exposed_name, request_id="signalled"))
    finally:
        post_save.disconnect(noted, sender=Call)

    assert seen == [("signalled", True)]


def test_it_updates_only_from_the_statuses_named(client_token):
    call = pending_call(client_token, make_tool(make_server(), "lookup"))
    operator = make_user("olga")
    decided = timezone.now()
    changes = {"status": Call.Status.APPROVED, "decided_by": operator, "decided_at": decided, "reason": "fine"}

    assert not statements.update_if_status(Call, call.pk, [Call.Status.APPROVED], changes)
    assert stored(call.pk)["status"] == Call.Status.PENDING
    assert statements.update_if_status(Call, call.pk, [Call.Status.PENDING, Call.Status.FORWARDED], changes)

    row = Call.objects.get(pk=call.pk)
    assert (row.status, row.decided_by_id, row.decided_at, row.reason) == ("approved", operator.pk, decided, "fine")
    assert not statements.update_if_status(Call, call.pk, [Call.Status.PENDING], {"reason": "again"})


def test_it_leaves_an_expression_to_the_orm(client_token):
    call = pending_call(client_token, make_tool(make_server(), "lookup"))

    assert statements.update_if_status(
        Call, call.pk, [Call.Status.PENDING], {"approvals_needed": F("approvals_needed") + 2}
    )

    assert Call.objects.get(pk=call.pk).approvals_needed == 3


def test_it_refuses_a_call_whose_token_is_not_saved_yet(db):
    tool = make_tool(make_server(), "lookup")
    unsaved = ClientToken(name="later")

    with pytest.raises(ValueError, match="unsaved related object 'token'"):
        statements.insert(Call(token=unsaved, tool=tool, tool_name=tool.exposed_name, request_id="early"))

    assert not Call.objects.filter(request_id="early").exists()
