import json
import os
import pwd

import pytest
from django.core.management import CommandError

from approvals import roles
from approvals.audit.models import AuditEvent
from approvals.calls import deciding, lifecycle
from approvals.calls.models import Call
from approvals.policy import rules
from approvals.protocol import revisions
from approvals.tokens.context import ClientContext
from tests.commands.conftest import from_the_shell, run
from tests.fixtures.people import make_user


def test_it_lists_calls_with_their_client_tool_status_and_rule(pending_call):
    header, row = run("list_calls").splitlines()
    assert header.split("\t") == ["id", "age", "client", "tool", "status", "rule", "decided by"]
    cells = row.split("\t")
    assert cells[0] == str(pending_call.pk) and cells[1].endswith("s")
    assert cells[2:] == ["agent", "shop_issue_refund", "pending", "no rule matched: ask by default", "-"]


def test_it_lists_only_the_calls_in_the_status_asked_for(pending_call):
    run("decide", str(pending_call.pk), "deny", "--as", make_user("ann", roles.OPERATOR).username)
    assert run("list_calls", "--status", "pending").strip() == "no pending calls"
    assert "denied" in run("list_calls", "--status", "denied")


def test_it_lists_at_most_the_limit_newest_first(client_token, refund_tool, pending_call):
    newer = Call.objects.create(
        token=client_token,
        tool=refund_tool,
        tool_name="shop_issue_refund",
        request_id="r2",
        era="modern",
        protocol_version="2026-07-28",
        arguments_digest="x",
        status=Call.Status.COMPLETED,
    )
    rows = json.loads(run("list_calls", "--json", "--limit", "1"))
    assert [r["id"] for r in rows] == [newer.pk]


def test_it_lists_calls_as_json(pending_call):
    [row] = json.loads(run("list_calls", "--json"))
    assert row["id"] == pending_call.pk and row["client"] == "agent" and row["status"] == "pending"
    assert row["decided_by"] == "" and isinstance(row["age_seconds"], int)


def test_it_refuses_a_limit_below_one(db):
    with pytest.raises(CommandError, match="at least 1"):
        run("list_calls", "--limit", "0")


def test_it_approves_a_pending_call_as_the_named_operator(pending_call):
    ann = make_user("ann", roles.OPERATOR)
    output = run("decide", str(pending_call.pk), "approve", "--as", "ann")
    assert output.strip() == f"approved call {pending_call.pk} (shop_issue_refund) as ann"
    pending_call.refresh_from_db()
    assert pending_call.status == Call.Status.APPROVED and pending_call.decided_by == ann
    assert AuditEvent.objects.filter(call_id=pending_call.pk, action="call.approved", actor_name="ann").exists()


def test_it_denies_with_the_reason_given(pending_call):
    make_user("ann", roles.OPERATOR)
    run("decide", str(pending_call.pk), "deny", "--as", "ann", "--reason", "refunds are frozen")
    pending_call.refresh_from_db()
    assert pending_call.status == Call.Status.DENIED and pending_call.reason == "refunds are frozen"


def test_a_second_decision_loses_and_says_who_decided_first(pending_call):
    make_user("ann", roles.OPERATOR)
    make_user("bob", roles.OPERATOR)
    run("decide", str(pending_call.pk), "approve", "--as", "ann")
    with pytest.raises(CommandError, match="Already approved by ann"):
        run("decide", str(pending_call.pk), "deny", "--as", "bob")
    pending_call.refresh_from_db()
    assert pending_call.status == Call.Status.APPROVED


def test_a_late_decision_exits_with_status_1_from_the_shell(pending_call, capsys):
    make_user("ann", roles.OPERATOR)
    make_user("bob", roles.OPERATOR)
    run("decide", str(pending_call.pk), "approve", "--as", "ann")
    with pytest.raises(SystemExit) as exited:
        from_the_shell("decide", str(pending_call.pk), "approve", "--as", "bob")
    assert exited.value.code == 1
    assert "already approved by ann" in capsys.readouterr().err.lower()


def test_it_approves_with_edited_arguments(pending_call):
    make_user("ann", roles.OPERATOR)
    output = run(
        "decide", str(pending_call.pk), "approve", "--as", "ann", "--arguments", '{"order_id": 7, "amount": 5}'
    )
    assert "with edited arguments" in output
    pending_call.refresh_from_db()
    assert pending_call.final_arguments == {"order_id": 7, "amount": 5}


def test_it_refuses_edited_arguments_the_schema_rejects_and_leaves_the_call_pending(pending_call):
    make_user("ann", roles.OPERATOR)
    with pytest.raises(CommandError, match="not valid") as refused:
        run("decide", str(pending_call.pk), "approve", "--as", "ann", "--arguments", '{"order_id": 7, "amount": 9000}')
    assert "9000" in str(refused.value)
    pending_call.refresh_from_db()
    assert pending_call.status == Call.Status.PENDING


@pytest.mark.parametrize("arguments, problem", [("{oops", "not valid JSON"), ("[1, 2]", "must be a JSON object")])
def test_it_refuses_arguments_that_are_not_a_json_object(pending_call, arguments, problem):
    make_user("ann", roles.OPERATOR)
    with pytest.raises(CommandError, match=problem):
        run("decide", str(pending_call.pk), "approve", "--as", "ann", "--arguments", arguments)


def test_it_refuses_arguments_with_a_denial(pending_call):
    make_user("ann", roles.OPERATOR)
    with pytest.raises(CommandError, match="goes with approve"):
        run("decide", str(pending_call.pk), "deny", "--as", "ann", "--arguments", "{}")


def test_it_decides_as_the_user_named_in_console_operator(pending_call, monkeypatch):
    make_user("ann", roles.OPERATOR)
    monkeypatch.setenv("CONSOLE_OPERATOR", "ann")
    assert run("decide", str(pending_call.pk), "approve").strip().endswith("as ann")


def test_it_decides_as_the_only_superuser_when_nobody_is_named(pending_call, monkeypatch):
    monkeypatch.delenv("CONSOLE_OPERATOR", raising=False)
    make_user("root", superuser=True)
    assert run("decide", str(pending_call.pk), "approve").strip().endswith("as root")


def test_it_asks_who_decides_when_there_are_several_superusers(pending_call, monkeypatch):
    monkeypatch.delenv("CONSOLE_OPERATOR", raising=False)
    make_user("root", superuser=True)
    make_user("toor", superuser=True)
    with pytest.raises(CommandError, match="--as USERNAME or \\$CONSOLE_OPERATOR"):
        run("decide", str(pending_call.pk), "approve")


def test_it_refuses_a_user_who_may_not_decide(pending_call):
    make_user("audrey")
    with pytest.raises(CommandError, match="audrey may not decide calls"):
        run("decide", str(pending_call.pk), "approve", "--as", "audrey")
    pending_call.refresh_from_db()
    assert pending_call.status == Call.Status.PENDING


def test_it_refuses_an_inactive_or_unknown_user(pending_call):
    make_user("gone", roles.OPERATOR, is_active=False)
    for username in ("gone", "ghost"):
        with pytest.raises(CommandError, match=f"no active user named '{username}'"):
            run("decide", str(pending_call.pk), "approve", "--as", username)


def test_it_refuses_a_call_that_does_not_exist(db):
    make_user("ann", roles.OPERATOR)
    with pytest.raises(CommandError, match="no call 999"):
        run("decide", "999", "approve", "--as", "ann")


def test_the_help_says_who_decides_by_default(capsys):
    with pytest.raises(SystemExit):
        from_the_shell("decide", "--help")
    help_text = " ".join(capsys.readouterr().out.split())
    assert "CONSOLE_OPERATOR" in help_text and "only active superuser" in help_text


def test_it_lists_the_arguments_and_the_binding_an_approval_is_held_to(pending_call):
    [row] = json.loads(run("list_calls", "--json"))
    assert row["arguments"] == {"order_id": 7, "amount": 20}
    assert row["binding"] == lifecycle.call_binding(pending_call)


def test_it_approves_with_the_binding_that_was_read(pending_call):
    make_user("ann", roles.OPERATOR)
    [row] = json.loads(run("list_calls", "--json"))
    run("decide", str(pending_call.pk), "approve", "--as", "ann", "--binding", row["binding"])
    pending_call.refresh_from_db()
    assert pending_call.status == Call.Status.APPROVED


def test_it_refuses_a_binding_read_before_the_call_changed(pending_call):
    make_user("ann", roles.OPERATOR)
    [row] = json.loads(run("list_calls", "--json"))
    Call.objects.filter(pk=pending_call.pk).update(tool_digest="a different definition")
    with pytest.raises(CommandError, match="changed since it was shown"):
        run("decide", str(pending_call.pk), "approve", "--as", "ann", "--binding", row["binding"])
    pending_call.refresh_from_db()
    assert pending_call.status == Call.Status.PENDING


def test_it_records_the_host_account_that_ran_the_command(pending_call, monkeypatch):
    make_user("ann", roles.OPERATOR)
    monkeypatch.setenv("USER", "somebody-else")  # a claim the command does not take
    run("decide", str(pending_call.pk), "approve", "--as", "ann")
    approved = AuditEvent.objects.get(call_id=pending_call.pk, action="call.approved")
    assert approved.actor_name == "ann" and approved.data["os_user"] == pwd.getpwuid(os.getuid()).pw_name
    assert approved.data["via"] == "command line"


def test_it_records_the_host_account_of_a_denial(pending_call):
    make_user("ann", roles.OPERATOR)
    run("decide", str(pending_call.pk), "deny", "--as", "ann", "--reason", "no")
    denied = AuditEvent.objects.get(call_id=pending_call.pk, action="call.denied")
    assert denied.data["os_user"] == pwd.getpwuid(os.getuid()).pw_name


def test_one_host_account_fills_one_place_of_a_quorum_whatever_names_it_gives(client_token, refund_tool):
    rules.create_rule(rules.RuleRequest("ask", tool_glob="*", name="two people", approvals_needed=2))
    ctx = ClientContext(client_token, revisions.MODERN, "2026-07-28")
    call, _ = lifecycle.receive_call(ctx, refund_tool, {"order_id": 7, "amount": 20}, 1, None)
    make_user("ann", roles.OPERATOR)
    bob = make_user("bob", roles.OPERATOR)
    assert "1 of 2 approvals: ann" in run("decide", str(call.pk), "approve", "--as", "ann")
    with pytest.raises(CommandError, match="host account .* approved already, as ann"):
        run("decide", str(call.pk), "approve", "--as", "bob")
    call.refresh_from_db()
    assert call.status == Call.Status.PENDING and call.approvals.count() == 1
    # bob himself, in the queue, is another person.
    assert deciding.decide(call.pk, bob, True).row.status == Call.Status.APPROVED
